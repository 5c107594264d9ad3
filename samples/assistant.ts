/**
 * An OpenAI assistant (Assistants v2) with a Skein tool, a multi-turn service thread that is
 * saved and resumed, a streamed turn, and file search: a file uploaded into a vector store,
 * attached to a thread, and an answer that cites it. Without OPENAI_API_KEY it runs against
 * the emulator.
 *
 *   npm run build && node dist/samples/assistant.js
 */
import 'reflect-metadata';
import OpenAI from 'openai';
import { tool } from 'skein';
import { fileCitationsOf, OpenAIAssistantAgent } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { z } from 'zod';

const weather = tool({
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `sunny, 21°C in ${city}`,
});

const emulator = process.env.OPENAI_API_KEY ? undefined : await Emulator.start();
const client = new OpenAI(emulator ? { apiKey: 'emulator', baseURL: emulator.openaiBaseURL } : {});

const agent = await OpenAIAssistantAgent.create(
  client,
  {
    model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini',
    name: 'concierge',
    instructions: 'You are a concise travel concierge.',
    executionOptions: { maxCompletionTokens: 400 },
  },
  { tools: [weather], polling: { intervalMs: 250 } },
);
try {
  const thread = agent.getNewThread();
  console.log((await agent.run('My name is Ada.', { thread })).text);
  console.log((await agent.run("What's the weather in Lisbon?", { thread })).text);

  // The thread is only an id: save it anywhere, resume it anywhere.
  const saved = JSON.stringify(await thread.serialize());
  const resumed = await agent.deserializeThread(JSON.parse(saved));

  process.stdout.write('streamed: ');
  await new Promise<void>((resolve, reject) =>
    agent.runStream("What's my name?", { thread: resumed }).subscribe({
      next: (update) => process.stdout.write(update.text),
      error: reject,
      complete: () => resolve(),
    }),
  );
  console.log();
  for (const m of await agent.getThreadMessages(resumed)) console.log(`  [${m.role}] ${m.contents.map((c) => (c.kind === 'text' ? c.text : '')).join('')}`);
  await agent.deleteThread(resumed);

  // File search: upload a file, index it in a vector store, attach the store to a thread.
  const file = await OpenAIAssistantAgent.uploadFile(client, {
    name: 'travel-policy.md',
    content: 'Economy tickets can be changed for a fee of 50 euros. Business tickets can be changed for free.',
  });
  const store = await OpenAIAssistantAgent.createVectorStore(client, { name: 'travel policy', fileIds: [file.id] });
  try {
    const docs = await agent.createThread({ vectorStoreIds: [store.id] });
    const answer = await agent.run('How much does it cost to change an economy ticket?', {
      thread: docs,
      invocationOptions: { enableFileSearch: true }, // or enableFileSearch in the definition
    });
    console.log(answer.text);
    for (const citation of fileCitationsOf(answer)) {
      console.log(`  cites ${citation.fileId === file.id ? file.name : citation.fileId} at ${citation.startIndex}..${citation.endIndex}`);
    }
    await agent.deleteThread(docs);
  } finally {
    await OpenAIAssistantAgent.deleteVectorStore(client, store.id);
    await OpenAIAssistantAgent.deleteFile(client, file.id);
  }
} finally {
  await agent.delete();
  await emulator?.stop();
}
