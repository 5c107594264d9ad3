/**
 * Multi-turn conversation, serialize, resume, stream.
 * Uses the real OpenAI API when OPENAI_API_KEY is set, the bundled emulator otherwise.
 *   npm start
 */
import { agentToken, createContainer } from 'skein';
import { openaiPlugin } from 'skein/openai';
import { Emulator } from 'skein/testing';

const apiKey = process.env.OPENAI_API_KEY;
const emulator = apiKey ? undefined : await Emulator.start();
const baseURL = emulator?.openaiBaseURL ?? process.env.OPENAI_BASE_URL;
console.log(emulator ? `No OPENAI_API_KEY: using the local emulator at ${baseURL}\n` : 'Using the OpenAI API\n');

const container = createContainer({
  plugins: [openaiPlugin({ apiKey: apiKey ?? 'emulator', baseURL })],
  agents: {
    assistant: { client: 'openai-chat', model: process.env.OPENAI_MODEL ?? 'gpt-4.1', instructions: 'You are a helpful assistant' },
  },
});
const agent = container.get(agentToken('assistant'));

async function say(text: string, thread = agent.getNewThread()) {
  console.log(`User: ${text}`);
  const response = await agent.run(text, { thread });
  console.log(`Agent: ${response.text}\n`);
}

const thread = agent.getNewThread();
await say('My name is Alice', thread);
await say("What's my name?", thread);

const saved = JSON.stringify(await thread.serialize());
console.log(`(serialized the thread: ${saved.length} bytes of JSON; resuming it as another process would)\n`);
const resumed = await agent.deserializeThread(JSON.parse(saved));

console.log('User: What did we talk about?');
process.stdout.write('Agent (streaming): ');
await new Promise<void>((resolve, reject) =>
  agent.runStream('What did we talk about?', { thread: resumed }).subscribe({
    next: (update) => process.stdout.write(update.text),
    error: reject,
    complete: resolve,
  }),
);
console.log('\n');

console.log('A throwaway thread knows nothing of the above:');
await say("What's my name?");

await emulator?.stop();
