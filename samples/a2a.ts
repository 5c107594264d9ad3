/**
 * Serve a Skein agent over A2A and talk to it from another process's point of view.
 *
 *   npm run build && node dist/samples/a2a.js
 *
 * With OPENAI_API_KEY set the hosted agent uses OpenAI; without it, the built-in emulator.
 */
import 'reflect-metadata';
import { lastValueFrom, tap } from 'rxjs';
import { ChatAgent } from 'skein';
import { A2AAgent, A2AServer } from 'skein/a2a';
import { OpenAIChatClient } from 'skein/openai';
import { Emulator } from 'skein/testing';

const emulator = process.env.OPENAI_API_KEY ? undefined : await Emulator.start();
const chatClient = new OpenAIChatClient(
  emulator ? { apiKey: 'emulator', baseURL: emulator.openaiBaseURL, model: 'gpt-test' } : { model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini' },
);

// 1. The serving side: any Skein agent becomes an A2A endpoint (agent card + JSON-RPC + streaming).
const assistant = new ChatAgent({ chatClient, name: 'assistant', description: 'A friendly assistant that remembers the conversation.' });
const server = new A2AServer({
  agent: assistant,
  skills: [{ id: 'chat', name: 'Chat', description: 'General conversation with memory', examples: ['My name is Ada'] }],
});
await server.listen(); // 127.0.0.1, a free port
console.log(`Serving "${assistant.name}" at ${server.agentCardUrl}`);

// 2. The calling side: an A2AAgent knows the remote only by its agent card URL.
const remote = new A2AAgent({ url: server.agentCardUrl!, name: 'remote-assistant' });
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

await server.close();
await emulator?.stop();
