/**
 * `npm run bench:a2a`: server CPU per A2A message, Skein's `A2AServer` against a bare
 * `@a2a-js/sdk` server hosting the same agent logic (target: within 1.2x).
 *   node dist/bench/a2a/a2a-bench.js [--quick] [--out <dir>] [--cpu-prof <dir>]
 *
 * Fairness: both servers run the same agent (a chat with per-context history, the model called
 * with streaming on the fixed-reply server, the reply published as the same A2A events; see
 * a2a-bench-server.ts), each in its own fresh process, and are driven by the SDK's own client
 * from this process over JSON-RPC: `sendMessage` (the reply comes back as the completed task)
 * and `sendMessageStream` (every event). A run is `contexts` conversations in parallel, each of
 * `turns` messages in a row on its own new context. The measure is the server process's CPU
 * time (user + system, `process.cpuUsage()` asked of the child over IPC before and after the
 * run) divided by the messages: robust on a shared machine, where wall time is not. The model
 * server runs in a third process and costs both the same; the client's CPU is not counted.
 *
 * Rounds of one process per contender (order alternating each round); in each process, warm-up
 * runs, then `runs` measured runs per mode; the process's figure is the median run. The ratio is
 * taken within each round, and the reported ratio is the median across rounds (min-max shown).
 * `--cpu-prof <dir>` writes a V8 CPU profile of each Skein server process there.
 */
import { type Task, Role, type StreamResponse, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIXED_REPLY_TEXT, startFixedReplyServer } from '../fixed-reply-server.js';
import { type Check, check, formatTable, renderSvg } from '../report.js';
import { median, round } from '../stats.js';
import { userText } from '../turns-bench.js';
import type { A2AContenderName } from './a2a-bench-server.js';

export interface A2ABenchOptions {
  /** Rounds of one fresh server process per contender. */
  rounds: number;
  /** Measured runs per mode in each process, after `warmupRuns`. */
  runs: number;
  warmupRuns: number;
  /** Conversations in parallel per run, each on a new context. */
  contexts: number;
  /** Messages per conversation. */
  turns: number;
}

export const FULL: A2ABenchOptions = { rounds: 7, runs: 5, warmupRuns: 2, contexts: 20, turns: 10 };
const QUICK: A2ABenchOptions = { rounds: 1, runs: 2, warmupRuns: 1, contexts: 10, turns: 5 };

const MODES = ['send', 'stream'] as const;
type Mode = (typeof MODES)[number];
const CONTENDERS: readonly A2AContenderName[] = ['sdk', 'skein'];

/** One mode's figures in one server process. */
interface ProcessFigures {
  /** Median over runs of the server's CPU per message, microseconds. */
  cpuUsPerMessage: number;
  /** Median over runs of the client-observed wall time per message (informational; runs are parallel). */
  wallUsPerMessage: number;
}

export interface ModeResult {
  mode: Mode;
  /** Medians across rounds. */
  skeinCpuUsPerMessage: number;
  sdkCpuUsPerMessage: number;
  skeinWallUsPerMessage: number;
  sdkWallUsPerMessage: number;
  /** Median across rounds of each round's Skein / SDK CPU ratio. */
  cpuRatio: number;
  roundRatios: number[];
}

export interface A2ABenchResults {
  date: string;
  environment: { node: string; platform: string; cpus: number; cpuModel: string; sdk: string };
  options: A2ABenchOptions;
  messagesPerRun: number;
  modes: ModeResult[];
  checks: Check[];
  passed: boolean;
}

const serverScript = fileURLToPath(new URL('./a2a-bench-server.js', import.meta.url));

interface ServerProcess {
  url: string;
  cpuUs(): Promise<number>;
  stop(): Promise<void>;
}

function startServer(name: A2AContenderName, modelBaseURL: string, cpuProfDir?: string): Promise<ServerProcess> {
  const execArgv = cpuProfDir && name === 'skein' ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [];
  const child: ChildProcess = fork(serverScript, [name, modelBaseURL], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the ${name} A2A server exited (code ${code}) before it listened`)));
    child.once('message', (message) => {
      child.removeAllListeners('exit');
      resolve({
        url: (message as { url: string }).url,
        cpuUs: () =>
          new Promise((done) => {
            child.once('message', (reply) => done((reply as { cpuUs: number }).cpuUs));
            child.send('cpu');
          }),
        stop: () =>
          new Promise<void>((done) => {
            child.once('exit', () => done());
            // SIGINT lets --cpu-prof write its profile; the child exits on disconnect too.
            child.kill('SIGINT');
          }),
      });
    });
  });
}

function sdkClient(baseUrl: string): Promise<Client> {
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({})],
    preferredTransports: ['JSONRPC'],
  });
  return new ClientFactory(options).createFromUrl(baseUrl);
}

function request(text: string, contextId: string) {
  const message = { messageId: randomUUID(), contextId, taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
  return { tenant: '', message, configuration: undefined, metadata: undefined };
}

function replyOf(task: Task): string {
  let text = '';
  for (const a of task.artifacts) for (const p of a.parts) if (p.content?.$case === 'text') text += p.content.value;
  return text;
}

/** One message, answered in full; returns the context id the server gave or kept. */
async function exchange(client: Client, mode: Mode, text: string, contextId: string): Promise<string> {
  if (mode === 'send') {
    const result = await client.sendMessage(request(text, contextId));
    if ('messageId' in result) throw new Error(`expected a task, got a message`);
    if (replyOf(result) !== FIXED_REPLY_TEXT) throw new Error(`wrong reply: ${JSON.stringify(replyOf(result))}`);
    return result.contextId;
  }
  let reply = '';
  let id = contextId;
  let completed = false;
  for await (const event of client.sendMessageStream(request(text, contextId)) as AsyncGenerator<StreamResponse>) {
    const payload = event.payload;
    if (payload?.$case === 'task') id = payload.value.contextId;
    if (payload?.$case === 'artifactUpdate' && payload.value.artifact) {
      const chunk = replyOf({ artifacts: [payload.value.artifact] } as Task);
      reply = payload.value.append ? reply + chunk : chunk;
    }
    if (payload?.$case === 'statusUpdate' && payload.value.status?.state === TaskState.TASK_STATE_COMPLETED) completed = true;
  }
  if (!completed || reply !== FIXED_REPLY_TEXT) throw new Error(`stream ended ${completed ? 'completed' : 'not completed'} with ${JSON.stringify(reply)}`);
  return id;
}

/** `contexts` conversations in parallel, `turns` messages each; the server's CPU and the wall time per message. */
async function run(server: ServerProcess, client: Client, mode: Mode, options: A2ABenchOptions): Promise<ProcessFigures> {
  const messages = options.contexts * options.turns;
  const cpuBefore = await server.cpuUs();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: options.contexts }, async () => {
      let contextId = '';
      for (let turn = 0; turn < options.turns; turn++) contextId = await exchange(client, mode, userText(turn), contextId);
    }),
  );
  const wallUs = (performance.now() - start) * 1000;
  // Let the server finish what follows its last response (task store saves, socket bookkeeping).
  await new Promise((resolve) => setTimeout(resolve, 50));
  const cpuUs = (await server.cpuUs()) - cpuBefore;
  return { cpuUsPerMessage: cpuUs / messages, wallUsPerMessage: wallUs / messages };
}

/** One contender's fresh server process: warm-up, then the measured runs of each mode. */
async function measureProcess(name: A2AContenderName, modelBaseURL: string, options: A2ABenchOptions, cpuProfDir?: string): Promise<Record<Mode, ProcessFigures>> {
  const server = await startServer(name, modelBaseURL, cpuProfDir);
  try {
    const client = await sdkClient(server.url);
    const figures = {} as Record<Mode, ProcessFigures>;
    for (const mode of MODES) {
      for (let i = 0; i < options.warmupRuns; i++) await run(server, client, mode, options);
      const runs: ProcessFigures[] = [];
      for (let i = 0; i < options.runs; i++) runs.push(await run(server, client, mode, options));
      figures[mode] = { cpuUsPerMessage: median(runs.map((r) => r.cpuUsPerMessage)), wallUsPerMessage: median(runs.map((r) => r.wallUsPerMessage)) };
    }
    return figures;
  } finally {
    await server.stop();
  }
}

export async function runA2ABench(options: A2ABenchOptions, log: (line: string) => void, cpuProfDir?: string): Promise<A2ABenchResults> {
  const model = await startFixedReplyServer();
  const rounds: Record<A2AContenderName, Record<Mode, ProcessFigures>>[] = [];
  try {
    for (let r = 0; r < options.rounds; r++) {
      const round = {} as Record<A2AContenderName, Record<Mode, ProcessFigures>>;
      for (let k = 0; k < CONTENDERS.length; k++) {
        const name = CONTENDERS[(k + r) % CONTENDERS.length]!;
        log(`round ${r + 1}/${options.rounds}: ${name} server`);
        round[name] = await measureProcess(name, model.baseURL, options, cpuProfDir);
      }
      rounds.push(round);
    }
  } finally {
    await model.stop();
  }
  const modes = MODES.map((mode): ModeResult => {
    const mid = (name: A2AContenderName, key: keyof ProcessFigures) => median(rounds.map((r) => r[name][mode][key]));
    const roundRatios = rounds.map((r) => r.skein[mode].cpuUsPerMessage / r.sdk[mode].cpuUsPerMessage);
    return {
      mode,
      skeinCpuUsPerMessage: mid('skein', 'cpuUsPerMessage'),
      sdkCpuUsPerMessage: mid('sdk', 'cpuUsPerMessage'),
      skeinWallUsPerMessage: mid('skein', 'wallUsPerMessage'),
      sdkWallUsPerMessage: mid('sdk', 'wallUsPerMessage'),
      cpuRatio: median(roundRatios),
      roundRatios,
    };
  });
  const checks = modes.map((m) => {
    const label = m.mode === 'send' ? 'JSON-RPC sendMessage' : 'JSON-RPC sendMessageStream';
    const spread = m.roundRatios.length > 1 ? `; median of ${m.roundRatios.length} rounds: ${Math.min(...m.roundRatios).toFixed(3)}x - ${Math.max(...m.roundRatios).toFixed(3)}x` : '';
    return check(`A2A server CPU/message, ${label}: Skein / bare SDK`, m.cpuRatio, 1.2, `${Math.round(m.skeinCpuUsPerMessage)} us vs ${Math.round(m.sdkCpuUsPerMessage)} us${spread}`);
  });
  const sdkPackage = fileURLToPath(new URL('../../../node_modules/@a2a-js/sdk/package.json', import.meta.url));
  const sdkVersion = (JSON.parse(await readFile(sdkPackage, 'utf8')) as { version: string }).version;
  return {
    date: new Date().toISOString(),
    environment: { node: process.version, platform: `${os.platform()} ${os.arch()}`, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? '?', sdk: sdkVersion },
    options,
    messagesPerRun: options.contexts * options.turns,
    modes,
    checks,
    passed: checks.every((c) => c.pass !== false),
  };
}

function rounded(value: unknown): unknown {
  if (typeof value === 'number') return round(value);
  if (Array.isArray(value)) return value.map(rounded);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rounded(v)]));
  return value;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const outAt = args.indexOf('--out');
  const profAt = args.indexOf('--cpu-prof');
  const here = path.dirname(fileURLToPath(import.meta.url));
  const out = outAt >= 0 ? path.resolve(args[outAt + 1]!) : path.resolve(here, '../../../bench/results');
  const cpuProfDir = profAt >= 0 ? path.resolve(args[profAt + 1] ?? 'a2a-profiles') : undefined;
  const options = args.includes('--quick') ? QUICK : FULL;
  const log = (line: string) => console.error(`bench:a2a: ${line}`);
  log(`${options.rounds} rounds; per process and mode ${options.warmupRuns} warm-up + ${options.runs} runs of ${options.contexts} contexts x ${options.turns} messages`);
  const results = await runA2ABench(options, log, cpuProfDir);
  for (const m of results.modes) {
    log(`${m.mode}: Skein ${Math.round(m.skeinCpuUsPerMessage)} us CPU/message, SDK ${Math.round(m.sdkCpuUsPerMessage)} us; rounds ${m.roundRatios.map((r) => r.toFixed(3)).join(' ')}`);
  }
  console.log(formatTable(results.checks));
  if (cpuProfDir || args.includes('--quick')) return; // profiled or quick runs are not results
  await mkdir(out, { recursive: true });
  await writeFile(path.join(out, 'a2a.json'), JSON.stringify(rounded(results), null, 2) + '\n');
  await writeFile(path.join(out, 'a2a.svg'), renderSvg(results.checks, `Skein A2A server CPU per message, ${results.environment.node}, ${results.date.slice(0, 10)}`));
  console.log(`\n${results.passed ? 'all targets met' : 'some targets missed'}; wrote ${path.relative(process.cwd(), out)}/a2a.json and a2a.svg`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
