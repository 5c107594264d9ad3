/**
 * One A2AServer process for the scale-out test: a ChatAgent on the emulator, contexts and tasks
 * in the shared store named by env (STORE=redis|postgres, PREFIX isolates the run). Prints
 * `{"url": ...}` once listening; runs until killed.
 */
import 'reflect-metadata';
import { ChatAgent } from 'skein';
import { A2AServer, PostgresA2AContextStore, PostgresTaskStore, RedisA2AContextStore } from 'skein/a2a';
import { OpenAIChatClient } from 'skein/openai';
import { InMemoryTaskStore } from '@a2a-js/sdk/server';

const { EMULATOR_URL, STORE, PREFIX, REDIS_URL, DATABASE_URL } = process.env;
const agent = new ChatAgent({
  chatClient: new OpenAIChatClient({ apiKey: 'test', baseURL: EMULATOR_URL!, maxRetries: 0, model: 'gpt-test' }),
  name: 'assistant',
});
const contextStore =
  STORE === 'redis' ? new RedisA2AContextStore({ url: REDIS_URL, keyPrefix: `${PREFIX}:a2a:` }) : new PostgresA2AContextStore({ connectionString: DATABASE_URL, schema: PREFIX });
// Redis has no task store of Skein's: its run shares tasks through PostgreSQL too when given, else keeps them per process.
const taskStore = DATABASE_URL ? new PostgresTaskStore({ connectionString: DATABASE_URL, schema: PREFIX }) : new InMemoryTaskStore();
const server = new A2AServer({ agent, contextStore, taskStore, logger: { warn: () => {}, error: (m, e) => console.error(m, e) } });
const url = await server.listen();
process.stdout.write(`${JSON.stringify({ url, pid: process.pid })}\n`);
