/**
 * Serve a Skein agent over A2A and talk to it from another process's point of view.
 *
 *   npm run build && node dist/samples/a2a.js
 *
 * With OPENAI_API_KEY set the hosted agent uses OpenAI; without it, the built-in emulator.
 */
import 'reflect-metadata';
import { lastValueFrom, tap } from 'rxjs';
import { z } from 'zod';
import { ChatAgent, tool } from 'skein';
import { A2AAgent, A2AServer } from 'skein/a2a';
import { OpenAIChatClient } from 'skein/openai';
import { Emulator } from 'skein/testing';

const emulator = process.env.OPENAI_API_KEY ? undefined : await Emulator.start();
const chatClient = new OpenAIChatClient(
  emulator ? { apiKey: 'emulator', baseURL: emulator.openaiBaseURL, model: 'gpt-test' } : { model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini' },
);

// 1. The serving side: any Skein agent becomes an A2A endpoint (agent card, JSON-RPC and
//    HTTP+JSON with streaming, A2A 0.3 clients too). Callers must show a bearer token.
const deleteFile = tool({
  name: 'delete_file',
  description: 'Deletes a file',
  parameters: z.object({ path: z.string() }),
  requiresApproval: true, // served over A2A, a call ends the task input-required until the caller approves
  execute: ({ path }) => `deleted ${path}`,
});
const assistant = new ChatAgent({ chatClient, name: 'assistant', description: 'A friendly assistant that remembers the conversation.', tools: [deleteFile] });
const server = new A2AServer({
  agent: assistant,
  skills: [{ id: 'chat', name: 'Chat', description: 'General conversation with memory', examples: ['My name is Ada'] }],
  // Tokens are user names here; verify a real token (JWT, introspection) in yours.
  userBuilder: async (req) => {
    const user = /^Bearer (\w+)$/.exec(req.headers.authorization ?? '')?.[1];
    return { isAuthenticated: user !== undefined, userName: user ?? '' };
  },
  securitySchemes: { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: 'user token', scheme: 'Bearer', bearerFormat: '' } } } },
  securityRequirements: [{ schemes: { bearer: { list: [] } } }],
});
await server.listen(); // 127.0.0.1, a free port; behind a proxy pass { url: 'https://public/base' }
console.log(`Serving "${assistant.name}" at ${server.agentCardUrl}`);

// 2. The calling side: an A2AAgent knows the remote only by its agent card URL, and answers
//    the card's security scheme with a token.
const remote = new A2AAgent({ url: server.agentCardUrl!, name: 'remote-assistant', credentials: { token: () => 'ada' } });
const card = await remote.getAgentCard();
console.log(`Remote card: ${card.name} — skills: ${card.skills.map((s) => s.name).join(', ')}`);

const thread = remote.getNewThread();
console.log('> My name is Ada');
console.log(`< ${(await remote.run('My name is Ada', { thread })).text}`);

// The thread is only the A2A context id: save it anywhere, resume it in another process.
const saved = JSON.stringify(await thread.serialize());
console.log(`Saved thread: ${saved}`);
const resumed = await remote.deserializeThread(JSON.parse(saved));

console.log("> What's my name? (streamed)");
process.stdout.write('< ');
await lastValueFrom(remote.runStream("What's my name?", { thread: resumed }).pipe(tap((u) => process.stdout.write(u.text))));
process.stdout.write('\n');

// 3. A tool that needs approval: the remote task waits (input-required) until we answer.
const asked = await remote.run('call delete_file {"path":"/tmp/demo.txt"}', { thread: resumed });
console.log(`< ${asked.text.split('\n')[0]} (input required)`);
console.log('> approve');
console.log(`< ${(await remote.run('approve', { thread: resumed })).text}`);

await server.close();
await emulator?.stop();
