/**
 * An OpenAI assistant (Assistants v2) from a definition (run it twice: the second run finds the
 * assistant the first made), with a Skein tool, a multi-turn service thread that is saved and
 * resumed, a streamed turn, an image in a message, a JSON answer checked with zod, and file
 * search: a file uploaded into a vector store, attached to a thread, and an answer that cites
 * it. Without OPENAI_API_KEY it runs against the emulator.
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

// Idempotent: finds the assistant this definition made (in any process), updates it when the
// definition changed, creates it only when there is none.
const agent = await OpenAIAssistantAgent.fromDefinition(
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

  // An image goes as an image part (inline bytes would be uploaded as an image file).
  const photo = agent.getNewThread();
  const seen = await agent.run(
    [{ role: 'user', contents: [{ kind: 'text', text: 'What is in this picture?' }, { kind: 'uri', uri: 'https://upload.wikimedia.org/wikipedia/commons/3/3f/JPEG_example_flower.jpg', mediaType: 'image/jpeg' }] }],
    { thread: photo },
  );
  console.log(`image: ${seen.text}`);

  // JSON output checked with a zod schema (per run here; also on the definition or the thread).
  const Trip = z.object({ city: z.string(), days: z.number() });
  const planned = await agent.run('Plan 3 days in Porto as JSON.', {
    thread: photo,
    invocationOptions: { responseFormat: { type: 'json_schema', name: 'trip', schema: Trip } },
  });
  console.log(`trip: ${JSON.stringify(Trip.parse(JSON.parse(planned.text)))}`);
  await agent.deleteThread(photo);

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
