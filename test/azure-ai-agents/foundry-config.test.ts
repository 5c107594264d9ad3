import { expect } from 'chai';
import { type AIAgent, agentToken, ConfigurationError, createContainer, type AgentConfig } from 'skein';
import { azureAIAgentsPlugin, emulatorConnection } from 'skein/azure-ai-agents';
import { emulatorPerTest } from '../support/emulator.js';
import { rejection } from '../support/async-expectations.js';

describe('Foundry agent config keys are used or reported, never ignored', () => {

  const running = emulatorPerTest();

  const agentFrom = async (config: Omit<AgentConfig, 'client'>): Promise<AIAgent> => {
    const container = await createContainer({
      plugins: [azureAIAgentsPlugin({ ...emulatorConnection(running.emulator.url), pollIntervalMs: 1 })],
      agents: { helper: { client: 'azure-ai-agents', model: 'gpt-4o', ...config } },
    });
    return container.get<AIAgent>(agentToken('helper'));
  };

  it('Foundry run parameters in the agent config reach every run (real SDK request body)', async () => {
    const agent = await agentFrom({
      maxPromptTokens: 500,
      truncationStrategy: { type: 'last_messages', lastMessages: 4 },
      parallelToolCalls: false,
      topP: 0.5,
      metadata: { team: 'support' },
    });
    expect((await agent.run('My name is Ada.')).text).to.equal('Nice to meet you, Ada!');
    const [run] = running.emulator.requests.filter((r) => r.method === 'POST' && /\/threads\/[^/]+\/runs$/.test(r.path));
    expect(run.body).to.deep.include({
      max_prompt_tokens: 500,
      truncation_strategy: { type: 'last_messages', last_messages: 4 },
      parallel_tool_calls: false,
      top_p: 0.5,
    });
    expect((run.body as { metadata: Record<string, string> }).metadata).to.include({ team: 'support' });
  });

  it('an unknown key is a ConfigurationError naming it and the accepted keys, before any request', async () => {
    const error = await rejection(agentFrom({ maxPromptToken: 500 }));
    expect(error).to.be.instanceOf(ConfigurationError);
    expect(error.message).to.contain('agents.helper.maxPromptToken: not a Foundry agent setting');
    expect(error.message).to.contain('maxPromptTokens');
    expect(running.emulator.requests).to.have.length(0);
  });

  it('core keys a Foundry agent cannot honour and badly typed run parameters are all reported at once', async () => {
    const error = (await rejection(agentFrom({ history: { maxMessages: 10 }, topP: 'high' }))) as ConfigurationError;
    expect(error).to.be.instanceOf(ConfigurationError);
    expect(error.problems).to.have.length(2);
    expect(error.message).to.contain('agents.helper.history: not used by a Foundry agent');
    expect(error.message).to.contain('truncationStrategy');
    expect(error.message).to.contain('agents.helper.topP: expected a number from 0 to 1, found "high"');
  });

  it('foundryTools in the config become the created agent\'s service tools', async () => {
    const agent = await agentFrom({ foundryTools: [{ type: 'code_interpreter' }] });
    await agent.run('hi');
    const created = running.emulator.requests.find((r) => r.method === 'POST' && r.path.endsWith('/assistants'));
    expect((created!.body as { tools: unknown[] }).tools).to.deep.equal([{ type: 'code_interpreter' }]);
  });
});
