import { expect } from 'chai';
import { ChatAgent, ConfigurationError, agentToken, createContainer, tool } from 'skein';
import { mcpPlugin, mcpServer } from 'skein/mcp';
import { importSdk } from '../../plugins/mcp/mcp-sdk.js';
import { OpenAIChatClient, openaiPlugin } from 'skein/openai';
import { z } from 'zod';
import { everythingStdio } from './mcp-fixtures.js';
import { useEmulator } from '../support/emulator.js';

describe('skein/mcp: wiring rules', () => {
  const emu = useEmulator();

  it('an MCP tool named like a local tool fails the run with an error naming it (use toolPrefix)', async () => {
    const server = mcpServer({ name: 'everything', ...everythingStdio(), allowTools: ['echo'] });
    const localEcho = tool({ name: 'echo', parameters: z.object({}), execute: () => 'local' });
    const agent = new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'k', baseURL: emu.emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 }), tools: [localEcho, server] });
    try {
      const failure = await agent.run('hi').catch((e: unknown) => e);
      expect(failure).to.be.instanceOf(TypeError);
      expect((failure as Error).message).to.contain('Two tools are named "echo"');
    } finally {
      await server.close();
    }
  });

  it('agents that take only fixed tools (Assistants) refuse an MCP server with a ConfigurationError', () => {
    const container = createContainer({
      plugins: [openaiPlugin({ apiKey: 'k', baseURL: emu.emulator.openaiBaseURL }), mcpPlugin({ servers: { files: { command: 'node' } } })],
      agents: { keeper: { client: 'openai-assistants', model: 'gpt-4.1', tools: ['mcp:files'] } },
    });
    expect(() => container.get(agentToken('keeper'))).to.throw(ConfigurationError, /"mcp:files" is a tool set listed at run time.*openai-assistants/);
  });

  it('mcpPlugin in code refuses a server entry that is neither stdio nor HTTP', () => {
    expect(() => mcpPlugin({ servers: { odd: {} as never } })).to.throw(ConfigurationError, /plugins\.mcp\.servers\.odd: expected a stdio server/);
  });

  it('a missing SDK is a ConfigurationError naming the package to install', async () => {
    const missing = Object.assign(new Error("Cannot find package '@modelcontextprotocol/sdk' imported from x"), { code: 'ERR_MODULE_NOT_FOUND' });
    const failure = await importSdk(() => Promise.reject(missing)).catch((e: unknown) => e);
    expect(failure).to.be.instanceOf(ConfigurationError);
    expect((failure as Error).message).to.contain('npm install @modelcontextprotocol/sdk@^1');
  });
});
