/**
 * OpenAI Responses with both thread kinds: service-managed (store: true, the default; by
 * previous_response_id or a conversation) and Skein-managed (store: false), serialize/resume
 * and explicit deletion. Without OPENAI_API_KEY it runs against the local emulator.
 *
 *   npm run build && node dist/samples/responses-threads.js
 */
import 'reflect-metadata';
import { type AIAgent, agentToken, createContainer } from 'skein';
import { openaiPlugin } from 'skein/openai';
import { Emulator } from 'skein/testing';

const emulator = process.env.OPENAI_API_KEY ? undefined : await Emulator.start();
const openai = emulator
  ? { apiKey: 'emulator', baseURL: emulator.openaiBaseURL }
  : { apiKey: process.env.OPENAI_API_KEY };
const model = process.env.OPENAI_MODEL ?? 'gpt-4.1-mini';

/** Each call is a fresh container, as a new process (or another machine) would build. */
function agent(name: 'chained' | 'conversation' | 'local'): AIAgent {
  const container = createContainer({
    plugins: [openaiPlugin(openai)],
    agents: {
      chained: { client: 'openai-responses', model, instructions: 'Answer briefly.' },
      conversation: { client: 'openai-responses', model, instructions: 'Answer briefly.', conversation: true },
      local: { client: 'openai-responses', model, instructions: 'Answer briefly.', store: false },
    },
  });
  return container.get(agentToken(name));
}

try {
  for (const name of ['chained', 'conversation', 'local'] as const) {
    const thread = agent(name).getNewThread();
    console.log(`\n== ${name} ==`);
    console.log('>', (await agent(name).run('My name is Ada.', { thread })).text);

    // Store the thread anywhere JSON goes; a service thread is just its id.
    const saved = JSON.stringify(await thread.serialize());
    console.log('serialized:', saved.length > 160 ? `${saved.slice(0, 160)}...` : saved);

    // Later, elsewhere: resume it.
    const resumedAgent = agent(name);
    const resumed = await resumedAgent.deserializeThread(JSON.parse(saved));
    console.log('>', (await resumedAgent.run("What's my name?", { thread: resumed })).text);

    // Service threads are never deleted implicitly: clean up explicitly.
    await resumedAgent.deleteThread(resumed);
    console.log('deleted');
  }
} finally {
  await emulator?.stop();
}
