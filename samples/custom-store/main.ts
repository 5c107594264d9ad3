/**
 * An app (SupportDesk) on Skein with a third-party message store: each conversation is a JSON
 * file; the serialized thread the app keeps per user holds only that file's key. Without
 * OPENAI_API_KEY it runs against the bundled emulator.
 *
 *   npm run build && node dist/samples/custom-store/main.js
 */
import 'reflect-metadata';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Emulator } from 'skein/testing';
import { InMemorySessions, SupportDesk, createSupportContainer } from './support-desk.js';

const emulator = process.env.OPENAI_API_KEY ? undefined : await Emulator.start();
const openai = emulator ? { apiKey: 'emulator', baseURL: emulator.openaiBaseURL } : { apiKey: process.env.OPENAI_API_KEY };
console.log(emulator ? `No OPENAI_API_KEY: using the local emulator at ${emulator.openaiBaseURL}` : 'Using the OpenAI API');

const threadsDirectory = await mkdtemp(path.join(tmpdir(), 'skein-support-'));
const orders = { statusOf: async (id: string) => (id === 'BLUEJAY' ? 'shipped on Monday, arriving Thursday' : undefined) };
const sessions = new InMemorySessions();

try {
  const desk = new SupportDesk(createSupportContainer({ openai, threadsDirectory, orders }), sessions);
  for (const question of ['My name is Alice.', 'Where is my order BLUEJAY?']) {
    console.log(`Alice: ${question}`);
    console.log(`Desk: ${await desk.ask('alice', question)}`);
  }
  console.log(`\nSession kept by the app: ${await sessions.load('alice')}`);
  console.log(`Thread files in ${threadsDirectory}: ${(await readdir(threadsDirectory)).join(', ')}`);

  // A new container (as after a restart) resumes the conversation from the session and the file.
  const restarted = new SupportDesk(createSupportContainer({ openai, threadsDirectory, orders }), sessions);
  console.log("\nAlice (after a restart): What's my name?");
  console.log(`Desk: ${await restarted.ask('alice', "What's my name?")}`);
  console.log(`(${(await restarted.history('alice')).length} messages in Alice's thread file)`);

  await restarted.forget('alice');
  console.log(`After forget: ${(await readdir(threadsDirectory)).length} thread files`);
} finally {
  await rm(threadsDirectory, { recursive: true, force: true });
  await emulator?.stop();
}
