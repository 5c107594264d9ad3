// npm run bench:durable — per-turn overhead of a durable run (DBOS) against a plain run of the same
// agent: a turn of two tool rounds (three model calls, two tool calls, one append) with an
// instant in-process model, so what is measured is Skein + DBOS + PostgreSQL, not a model.
import 'reflect-metadata';
import pg from 'pg';
import { lastValueFrom, toArray } from 'rxjs';
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

async function measure(label: string, turn: () => Promise<unknown>, turns = TURNS) {
  for (let i = 0; i < 3; i++) await turn(); // warm-up
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < turns; i++) await turn();
  const wallMs = (performance.now() - start) / turns;
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000 / turns;
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
/** A durable agent of its own (same client, tools and store) per stream mode. */
function durableAs(name: string, options: { stream: boolean; streamDeltas?: boolean }, client = new ScriptedClient()) {
  const each = new ChatAgent({ name, chatClient: client, tools, chatMessageStoreFactory: store });
  return { agent: each, durable: runner.durable(each, options), ids: [] as string[] };
}
const modes = [
  { label: 'durable, whole replies', ...durableAs('bench-whole', { stream: true, streamDeltas: false }) },
  { label: 'durable, stream of deltas', ...durableAs('bench-deltas', { stream: true }) },
  { label: 'durable, stream off', ...durableAs('bench-off', { stream: false }) },
];
// A paced model (a piece of 3 characters every PACE_MS, as tokens come from a service): shows the coalescing.
const PACE_MS = Number(process.env.PACE_MS ?? 10);
const paced = { label: `deltas, paced ${PACE_MS} ms/piece`, ...durableAs('bench-paced', { stream: true }, new ScriptedClient({ chunkDelayMs: PACE_MS })) };
const pacedPlain = new ChatAgent({ name: 'bench-paced-plain', chatClient: new ScriptedClient({ chunkDelayMs: PACE_MS }), tools, chatMessageStoreFactory: store });
await runner.launch();
try {
  const plain = await measure('plain run (SQLite thread)', () => agent.run('research', { thread: agent.getNewThread() }));
  for (const mode of modes) {
    const wall = await measure(mode.label, async () => mode.ids.push((await mode.durable.run('research', { thread: mode.agent.getNewThread() })).runId));
    const rows = await rowsPerRun(mode.ids);
    console.log(`  overhead +${(wall - plain).toFixed(2)} ms/turn; rows per turn: ${rows.steps} operation rows + ${rows.streamRows} stream rows (+ the workflow's status/input/output)`);
  }
  const pacedTurns = Number(process.env.PACED_TURNS ?? 5);
  const plainPaced = await measure('plain runStream, paced', () => lastValueFrom(pacedPlain.runStream('research', { thread: pacedPlain.getNewThread() }).pipe(toArray())), pacedTurns);
  const wall = await measure(paced.label, async () => paced.ids.push((await paced.durable.run('research', { thread: paced.agent.getNewThread() })).runId), pacedTurns);
  const rows = await rowsPerRun(paced.ids);
  // 3 model calls: 4 + 4 pieces (two argument deltas, the call, usage) and the answer's pieces plus usage.
  const answer = (await runner.getRun(paced.ids[0]!)).text;
  const pieces = 8 + Math.ceil(answer.length / 3) + 1;
  console.log(`  overhead +${(wall - plainPaced).toFixed(2)} ms/turn; ${pieces} streamed pieces per turn -> ${rows.streamRows} stream rows (2 of them tool results); ${rows.steps} operation rows`);
} finally {
  await runner.shutdown();
  store.close();
  const client = new pg.Client({ connectionString: URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await client.end();
}
