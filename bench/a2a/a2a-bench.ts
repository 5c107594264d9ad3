/**
 * `npm run bench:a2a`: server CPU per A2A message, Skein's `A2AServer` against a bare
 * `@a2a-js/sdk` server hosting the same agent logic (target: within 1.2x).
 *   node dist/bench/a2a/a2a-bench.js [--quick] [--out <dir>] [--cpu-prof <dir>] [--mode send|stream] [--rounds N --pairs N --warmupRuns N --contexts N --turns N]
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
 * Other jobs on the machine move CPU time by tens of percent from minute to minute, so the two
 * servers are measured side by side: each round starts a fresh process of each (both listening,
 * only one driven at a time), warms both up in both modes, then, per mode, runs them in pairs,
 * one run on each back to back, the order alternating. The ratio is taken within each pair; the
 * reported ratio is the median over all pairs of all rounds (quartiles and each round's median
 * shown), the CPU per message the median over the same runs.
 * `--cpu-prof <dir>` writes a V8 CPU profile of each server process to <dir>/skein and <dir>/sdk.
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
import { median, quantile, round } from '../stats.js';
import { runMain } from '../bench-main.js';
import { userText } from '../turns-bench.js';
import type { A2AContenderName } from './a2a-bench-server.js';

export interface A2ABenchOptions {
  /** Rounds of one fresh server process per contender. */
  rounds: number;
  /** Measured pairs of runs (one per server, back to back) per mode and round, after `warmupRuns` of each mode on each. */
  pairs: number;
  warmupRuns: number;
  /** Conversations in parallel per run, each on a new context. */
  contexts: number;
  /** Messages per conversation. */
  turns: number;
}

export const FULL: A2ABenchOptions = { rounds: 5, pairs: 8, warmupRuns: 2, contexts: 20, turns: 10 };
const QUICK: A2ABenchOptions = { rounds: 1, pairs: 2, warmupRuns: 1, contexts: 10, turns: 5 };

const MODES = ['send', 'stream'] as const;
export type Mode = (typeof MODES)[number];
const CONTENDERS: readonly A2AContenderName[] = ['sdk', 'skein'];

/** One run's figures. */
interface RunFigures {
  /** The server's CPU time (user + system) per message, microseconds. */
  cpuUsPerMessage: number;
  /** Of which system (kernel) time. */
  systemUsPerMessage: number;
  /** Client-observed wall time of the run per message (informational: conversations run in parallel). */
  wallUsPerMessage: number;
}

/** One mode in one round: each pair is a run on each server, back to back. */
interface RoundFigures {
  pairs: Record<A2AContenderName, RunFigures>[];
}

export interface ModeResult {
  mode: Mode;
  /** Medians over all pairs. */
  skeinCpuUsPerMessage: number;
  sdkCpuUsPerMessage: number;
  skeinSystemUsPerMessage: number;
  sdkSystemUsPerMessage: number;
  skeinWallUsPerMessage: number;
  sdkWallUsPerMessage: number;
  /** Median over all pairs of the pair's Skein / SDK CPU ratio. */
  cpuRatio: number;
  ratioQuartiles: [number, number];
  /** Each round's median pair ratio. */
  roundRatios: number[];
  pairRatios: number[];
}

export interface A2ABenchResults {
  date: string;
  environment: { node: string; platform: string; cpus: number; cpuModel: string; sdk: string; loadAverage: number[] };
  options: A2ABenchOptions;
  messagesPerRun: number;
  modes: ModeResult[];
  checks: Check[];
  passed: boolean;
}

const serverScript = fileURLToPath(new URL('./a2a-bench-server.js', import.meta.url));

interface ServerProcess {
  url: string;
  /** The process's CPU time so far: user + system, and system alone, microseconds. */
  cpuUs(): Promise<{ cpuUs: number; systemUs: number }>;
  stop(): Promise<void>;
}

function startServer(name: A2AContenderName, modelBaseURL: string, cpuProfDir?: string): Promise<ServerProcess> {
  const execArgv = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(cpuProfDir, name)}`] : [];
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
            child.once('message', (reply) => done(reply as { cpuUs: number; systemUs: number }));
            child.send('cpu');
          }),
        stop: () =>
          new Promise<void>((done) => {
            child.once('exit', () => done());
            // A normal exit (not a signal) lets --cpu-prof write its profile.
            child.disconnect();
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
async function run(server: ServerProcess, client: Client, mode: Mode, options: A2ABenchOptions): Promise<RunFigures> {
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
  const cpuAfter = await server.cpuUs();
  return {
    cpuUsPerMessage: (cpuAfter.cpuUs - cpuBefore.cpuUs) / messages,
    systemUsPerMessage: (cpuAfter.systemUs - cpuBefore.systemUs) / messages,
    wallUsPerMessage: wallUs / messages,
  };
}

/** One round: a fresh process per contender, both listening; per mode, warm-up, then pairs of runs. */
async function measureRound(modelBaseURL: string, options: A2ABenchOptions, modes: readonly Mode[], log: (line: string) => void, cpuProfDir?: string): Promise<Record<Mode, RoundFigures>> {
  const servers: Partial<Record<A2AContenderName, ServerProcess>> = {};
  try {
    for (const name of CONTENDERS) servers[name] = await startServer(name, modelBaseURL, cpuProfDir);
    const clients = { sdk: await sdkClient(servers.sdk!.url), skein: await sdkClient(servers.skein!.url) };
    const measure = (name: A2AContenderName, mode: Mode) => run(servers[name]!, clients[name], mode, options);
    const figures = {} as Record<Mode, RoundFigures>;
    // Both modes warm up before either is measured: the mode measured first would otherwise pay
    // for the JIT warming code both modes share (more of it in Skein's server).
    for (const mode of modes) for (let i = 0; i < options.warmupRuns; i++) for (const name of CONTENDERS) await measure(name, mode);
    for (const mode of modes) {
      const pairs: Record<A2AContenderName, RunFigures>[] = [];
      for (let i = 0; i < options.pairs; i++) {
        // Each pair's two runs back to back, the order alternating, so both see the same machine.
        const order = i % 2 === 0 ? CONTENDERS : [...CONTENDERS].reverse();
        const pair = {} as Record<A2AContenderName, RunFigures>;
        for (const name of order) pair[name] = await measure(name, mode);
        pairs.push(pair);
      }
      log(`${mode}: pair ratios ${pairs.map((p) => (p.skein.cpuUsPerMessage / p.sdk.cpuUsPerMessage).toFixed(3)).join(' ')}`);
      figures[mode] = { pairs };
    }
    return figures;
  } finally {
    for (const server of Object.values(servers)) await server.stop();
  }
}

export async function runA2ABench(options: A2ABenchOptions, log: (line: string) => void, cpuProfDir?: string, modes: readonly Mode[] = MODES): Promise<A2ABenchResults> {
  const model = await startFixedReplyServer();
  const rounds: Record<Mode, RoundFigures>[] = [];
  try {
    for (let r = 0; r < options.rounds; r++) {
      log(`round ${r + 1}/${options.rounds}: a fresh server process each`);
      rounds.push(await measureRound(model.baseURL, options, modes, log, cpuProfDir));
    }
  } finally {
    await model.stop();
  }
  const results = modes.map((mode): ModeResult => {
    const pairs = rounds.flatMap((r) => r[mode].pairs);
    const mid = (name: A2AContenderName, key: keyof RunFigures) => median(pairs.map((p) => p[name][key]));
    const ratios = pairs.map((p) => p.skein.cpuUsPerMessage / p.sdk.cpuUsPerMessage);
    return {
      mode,
      skeinCpuUsPerMessage: mid('skein', 'cpuUsPerMessage'),
      sdkCpuUsPerMessage: mid('sdk', 'cpuUsPerMessage'),
      skeinSystemUsPerMessage: mid('skein', 'systemUsPerMessage'),
      sdkSystemUsPerMessage: mid('sdk', 'systemUsPerMessage'),
      skeinWallUsPerMessage: mid('skein', 'wallUsPerMessage'),
      sdkWallUsPerMessage: mid('sdk', 'wallUsPerMessage'),
      cpuRatio: median(ratios),
      ratioQuartiles: [quantile(ratios, 0.25), quantile(ratios, 0.75)],
      roundRatios: rounds.map((r) => median(r[mode].pairs.map((p) => p.skein.cpuUsPerMessage / p.sdk.cpuUsPerMessage))),
      pairRatios: ratios,
    };
  });
  const checks = results.map((m) => {
    const label = m.mode === 'send' ? 'JSON-RPC sendMessage' : 'JSON-RPC sendMessageStream';
    const [q1, q3] = m.ratioQuartiles;
    const spread = `; ${m.pairRatios.length} pairs, quartiles ${q1.toFixed(3)}x - ${q3.toFixed(3)}x; rounds ${m.roundRatios.map((r) => `${r.toFixed(3)}x`).join(', ')}`;
    return check(`A2A server CPU/message, ${label}: Skein / bare SDK`, m.cpuRatio, 1.2, `${Math.round(m.skeinCpuUsPerMessage)} us vs ${Math.round(m.sdkCpuUsPerMessage)} us${spread}`);
  });
  const sdkPackage = fileURLToPath(new URL('../../../node_modules/@a2a-js/sdk/package.json', import.meta.url));
  const sdkVersion = (JSON.parse(await readFile(sdkPackage, 'utf8')) as { version: string }).version;
  return {
    date: new Date().toISOString(),
    environment: { node: process.version, platform: `${os.platform()} ${os.arch()}`, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? '?', sdk: sdkVersion, loadAverage: os.loadavg().map((l) => round(l, 2)) },
    options,
    messagesPerRun: options.contexts * options.turns,
    modes: results,
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
  const options = { ...(args.includes('--quick') ? QUICK : FULL) };
  // `--pairs 4` etc. override one option (for profiling and A/B runs; such runs write no results).
  for (const key of Object.keys(options) as (keyof A2ABenchOptions)[]) {
    const at = args.indexOf(`--${key}`);
    if (at >= 0) options[key] = Number(args[at + 1]);
  }
  const modeAt = args.indexOf('--mode');
  const modes = modeAt >= 0 ? MODES.filter((m) => m === args[modeAt + 1]) : MODES;
  if (modes.length === 0) throw new Error(`--mode takes send or stream, not "${args[modeAt + 1]}"`);
  const custom = modeAt >= 0 || Object.keys(options).some((key) => args.includes(`--${key}`));
  const log = (line: string) => console.error(`bench:a2a: ${line}`);
  log(`${options.rounds} rounds; per round and mode ${options.warmupRuns} warm-up runs + ${options.pairs} pairs of runs of ${options.contexts} contexts x ${options.turns} messages`);
  const results = await runA2ABench(options, log, cpuProfDir, modes);
  for (const m of results.modes) {
    log(`${m.mode}: Skein ${Math.round(m.skeinCpuUsPerMessage)} us CPU/message (system ${Math.round(m.skeinSystemUsPerMessage)}), SDK ${Math.round(m.sdkCpuUsPerMessage)} us (system ${Math.round(m.sdkSystemUsPerMessage)}); round medians ${m.roundRatios.map((r) => r.toFixed(3)).join(' ')}`);
  }
  console.log(formatTable(results.checks));
  if (cpuProfDir || custom || args.includes('--quick')) return; // profiled, quick or custom runs are not results
  await mkdir(out, { recursive: true });
  await writeFile(path.join(out, 'a2a.json'), JSON.stringify(rounded(results), null, 2) + '\n');
  await writeFile(path.join(out, 'a2a.svg'), renderSvg(results.checks, `Skein A2A server CPU per message, ${results.environment.node}, ${results.date.slice(0, 10)}`));
  console.log(`\n${results.passed ? 'all targets met' : 'some targets missed'}; wrote ${path.relative(process.cwd(), out)}/a2a.json and a2a.svg`);
}

runMain(main);
