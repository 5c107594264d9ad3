/**
 * An agent using the tools of an MCP server (the reference server-everything, over stdio):
 * a tool call, then a call that needs approval, with the thread serialized and resumed while it
 * waits. Uses the real OpenAI API when OPENAI_API_KEY is set, the bundled emulator otherwise.
 *   npm run build && node dist/samples/mcp.js
 */
import 'reflect-metadata';
import { type AIAgent, agentToken, approvalResponse, createContainer } from 'skein';
import { mcpPlugin } from 'skein/mcp';
import { openaiPlugin } from 'skein/openai';
import { Emulator } from 'skein/testing';

const apiKey = process.env.OPENAI_API_KEY;
const emulator = apiKey ? undefined : await Emulator.start();
const baseURL = emulator?.openaiBaseURL ?? process.env.OPENAI_BASE_URL;
console.log(emulator ? `No OPENAI_API_KEY: using the local emulator at ${baseURL}\n` : 'Using the OpenAI API\n');

const container = createContainer({
  plugins: [
    openaiPlugin({ apiKey: apiKey ?? 'emulator', baseURL }),
    mcpPlugin({
      servers: {
        // Any MCP server works the same; `{ url, headers }` for one over Streamable HTTP.
        everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything', 'stdio'], allowTools: ['echo', 'get-sum'], requiresApproval: ['get-sum'] },
      },
    }),
  ],
  agents: { helper: { client: 'openai-chat', model: process.env.OPENAI_MODEL ?? 'gpt-4.1', tools: ['mcp:everything'] } },
});
const agent = container.get<AIAgent>(agentToken('helper'));
const thread = agent.getNewThread();

try {
  const say = 'call echo {"message":"hello over MCP"}';
  console.log(`User: ${say}`);
  console.log(`Agent: ${(await agent.run(say, { thread })).text}\n`);

  const ask = 'call get-sum {"a":2,"b":40}';
  console.log(`User: ${ask}`);
  const asked = await agent.run(ask, { thread });
  const request = asked.approvalRequests[0]!;
  console.log(`Agent asks to run ${request.name} ${request.arguments}`);

  // The app may stop here: the thread (with the pending call) is plain JSON.
  const saved = JSON.stringify(await thread.serialize());
  const resumed = await agent.deserializeThread(JSON.parse(saved));
  console.log(`(serialized the waiting thread: ${saved.length} bytes; resumed it)\n`);

  console.log('User: (approves)');
  console.log(`Agent: ${(await agent.run(approvalResponse(request, true), { thread: resumed })).text}`);
} finally {
  await container.unbindAllAsync(); // stops the MCP server process
  await emulator?.stop();
}
