// npm run bench:durable — per-turn overhead of a durable run (DBOS) against a plain run of the same
// agent: a turn of two tool rounds (three model calls, two tool calls, one append) with an
// instant in-process model, so what is measured is Skein + DBOS + PostgreSQL, not a model.
import 'reflect-metadata';
import pg from 'pg';
import { ChatAgent, tool } from 'skein';
import { DbosDurableRunner } from 'skein/dbos';
import { SqliteChatMessageStoreFactory } from 'skein/store-sqlite';
import { z } from 'zod';
import { ScriptedClient } from '../../test/dbos/fixtures/scripted-client.js';

const URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `bench_dbos_${process.pid}`;
const TURNS = Number(process.env.TURNS ?? 30);

const tools = ['fetch_page', 'summarize'].map((name) => tool({ name, parameters: z.object({ step: z.number() }), execute: ({ step }) => `${name} ${step}` }));
// A SQLite thread (in memory), so the plain run appends to a store too and the durable append is a step.
const store = new SqliteChatMessageStoreFactory({ path: ':memory:' });
const agent = new ChatAgent({ name: 'bench', chatClient: new ScriptedClient(), tools, chatMessageStoreFactory: store });

async function measure(label: string, turn: () => Promise<unknown>) {
  for (let i = 0; i < 3; i++) await turn(); // warm-up
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < TURNS; i++) await turn();
  const wallMs = (performance.now() - start) / TURNS;
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000 / TURNS;
  console.log(`${label.padEnd(28)} wall ${wallMs.toFixed(2)} ms/turn   cpu ${cpuMs.toFixed(2)} ms/turn (this process; PostgreSQL's own CPU not included)`);
  return wallMs;
}

async function rowsPerRun(runIds: string[]): Promise<{ steps: number; streamRows: number }> {
  const client = new pg.Client({ connectionString: URL });
  await client.connect();
  try {
    const steps = await client.query(`SELECT count(*)::int AS n FROM "${SCHEMA}".operation_outputs WHERE workflow_uuid = ANY($1)`, [runIds]);
    const streams = await client.query(`SELECT count(*)::int AS n FROM "${SCHEMA}".streams WHERE workflow_uuid = ANY($1)`, [runIds]);
    return { steps: steps.rows[0].n / runIds.length, streamRows: streams.rows[0].n / runIds.length };
  } finally {
    await client.end();
  }
}

const runner = new DbosDurableRunner({ systemDatabaseUrl: URL, schema: SCHEMA, pollingIntervalMs: 10 });
const durable = runner.durable(agent, { stream: true });
const quiet = new ChatAgent({ name: 'bench-nostream', chatClient: new ScriptedClient(), tools, chatMessageStoreFactory: store });
const durableQuiet = runner.durable(quiet, { stream: false });
await runner.launch();
try {
  const plain = await measure('plain run (SQLite thread)', () => agent.run('research', { thread: agent.getNewThread() }));
  const ids: string[] = [];
  const withStream = await measure('durable run, stream on', async () => ids.push((await durable.run('research', { thread: agent.getNewThread() })).runId));
  const idsQuiet: string[] = [];
  const noStream = await measure('durable run, stream off', async () => idsQuiet.push((await durableQuiet.run('research', { thread: quiet.getNewThread() })).runId));
  console.log(`overhead per turn: +${(withStream - plain).toFixed(2)} ms (stream on), +${(noStream - plain).toFixed(2)} ms (stream off)`);
  const on = await rowsPerRun(ids);
  const off = await rowsPerRun(idsQuiet);
  console.log(`rows written per turn (6 steps: 3 model calls, 2 tool calls, 1 append): stream on ${on.steps} step rows + ${on.streamRows} stream rows; stream off ${off.steps} step rows + ${off.streamRows} stream rows; plus the workflow's status/input/output rows`);
} finally {
  await runner.shutdown();
  store.close();
  const client = new pg.Client({ connectionString: URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await client.end();
}
