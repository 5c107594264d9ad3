/**
 * `npm run bench`: every Skein performance target in one process tree, against a fixed-reply
 * server it starts itself. Prints the ratio table, writes bench/results/latest.{json,svg}.
 *   node --expose-gc dist/bench/run-bench.js [--quick] [--peers] [--out <dir>] [--only run|stream|memory]
 * `--only` runs one part and prints its rows, writing nothing (for profiling and A/B runs).
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type ConcurrencyResult, type IdleThreadMemory, type LongThreadMemory, runConcurrency, runLongThreadMemory } from './concurrency-bench.js';
import { startFixedReplyServer } from './fixed-reply-server.js';
import { type ImportRssResult, runImportRss } from './import-rss-bench.js';
import { type Check, check, formatTable, renderSvg } from './report.js';
import { type SerializationResult, runSerialization } from './serialization-bench.js';
import { round } from './stats.js';
import { isEntryPoint, runMain } from './bench-main.js';
import { type ContenderResult, mergeProcessResults, skeinAgent, type TurnsOptions } from './turns-bench.js';
import type { ContenderList } from './bench-child.js';

export interface BenchOptions {
  turns: number;
  runs: number;
  warmupRuns: number;
  serializationMessages: number;
  serializationIterations: number;
  conversations: number;
  rssSamples: number;
  /** Idle threads of the 50-turn conversation measured for memory, and the turns each had. */
  longMemoryThreads: number;
  longMemoryTurns: number;
  /** Separate processes the turns run in; their results are merged by median. */
  processes: number;
  /** Compare LangChain / `ai` / `@openai/agents` too, when installed. */
  peers: boolean;
  log: (line: string) => void;
}

export const FULL: Omit<BenchOptions, 'peers' | 'log'> = {
  turns: 50,
  runs: 20,
  // Past V8's warm-up: a process's cost per turn falls from ~2,000 to ~850 us over its first 40-60
  // conversations (docs/performance.md, round 12); measured on that slope, a contender whose code is
  // still being compiled reads its last turns cheaper than its first, and flatness reads the JIT.
  warmupRuns: 60,
  serializationMessages: 10_000,
  serializationIterations: 20,
  conversations: 1000,
  rssSamples: 5,
  longMemoryThreads: 200,
  longMemoryTurns: 25,
  processes: 6,
};

/** Issue 31's targets: Skein / the raw SDK, and the growth with history Skein adds to the SDK's own. */
export const TARGETS = { run: 1.05, stream: 1.1, flatness: 1.05 } as const;

export interface BenchResults {
  date: string;
  environment: { node: string; platform: string; cpus: number; cpuModel: string };
  options: Omit<BenchOptions, 'log'>;
  turns: ContenderResult[];
  peers: { results: ContenderResult[]; notes: string[]; versions: Record<string, string> } | undefined;
  serialization: SerializationResult;
  concurrency: ConcurrencyResult;
  longMemory: LongThreadMemory;
  importRss: ImportRssResult;
  checks: Check[];
  passed: boolean;
}

export async function runBench(options: BenchOptions): Promise<BenchResults> {
  const { log } = options;
  const server = await startFixedReplyServer();
  let turns: ContenderResult[];
  let peers: BenchResults['peers'];
  try {
    log(`turns: ${options.processes} rounds of one process per contender, ${options.runs} runs (+${options.warmupRuns} warm-up) of ${options.turns} turns each`);
    const measured = await turnsInProcesses(options.peers ? 'peers' : 'core', server.baseURL, options);
    turns = measured.results.slice(0, 4);
    if (options.peers) {
      for (const note of measured.notes) log(`peers: ${note}`);
      peers = { ...measured, results: measured.results.length > 4 ? measured.results : [] };
    }
  } finally {
    await server.stop();
  }
  log(`serialization: ${options.serializationMessages} messages x ${options.serializationIterations}`);
  const serialization = await runSerialization(skeinAgent('http://127.0.0.1:9/v1'), options.serializationMessages, options.serializationIterations);
  log(`concurrency: ${options.conversations} conversations on the emulator, in a fresh process`);
  const concurrency = await inChild<ConcurrencyResult>(['concurrency', String(options.conversations)]);
  log(`memory: ${options.longMemoryThreads} threads of ${options.longMemoryTurns} turns, in a fresh process`);
  const longMemory = await inChild<LongThreadMemory>(['long-memory', String(options.longMemoryThreads), String(options.longMemoryTurns)]);
  log(`import RSS: ${options.rssSamples} child processes per module set`);
  const importRss = await runImportRss(options.rssSamples);

  const checks = checksOf(turns, peers, serialization, concurrency, longMemory, importRss);
  const { log: _log, ...recorded } = options;
  return {
    date: new Date().toISOString(),
    environment: { node: process.version, platform: `${os.platform()} ${os.arch()}`, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? '?' },
    options: recorded,
    turns,
    peers,
    serialization,
    concurrency,
    longMemory,
    importRss,
    checks,
    passed: checks.every((c) => c.pass !== false),
  };
}

const benchChild = fileURLToPath(new URL('./bench-child.js', import.meta.url));

/** Runs one part of the bench in a fresh child process and returns what it printed, parsed. */
async function inChild<T>(args: string[]): Promise<T> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', benchChild, ...args], { maxBuffer: 64 * 2 ** 20 });
  return JSON.parse(stdout) as T;
}

/**
 * Each contender's turns in its own fresh process, as an app would run one framework, never
 * two: contenders sharing a process share the SDK's JIT state and the GC heap, so each one's
 * object shapes and garbage land on the other's bill. Rounds of one process per contender (the
 * order rotating each round) keep pairs close in time; a ratio is taken within each round,
 * then the median across rounds.
 */
async function turnsInProcesses(
  set: 'core' | 'peers',
  baseURL: string,
  options: BenchOptions,
  only?: readonly string[],
): Promise<NonNullable<BenchResults['peers']>> {
  const listed = await inChild<ContenderList>(['contenders', set, baseURL]);
  if (only) listed.contenders = listed.contenders.filter((c) => only.includes(c.name));
  const names = listed.contenders.map((c) => c.name);
  const turnsOptions: TurnsOptions = { turns: options.turns, runs: options.runs, warmupRuns: options.warmupRuns };
  const rounds: ContenderResult[][] = [];
  for (let round = 0; round < options.processes; round++) {
    const results: ContenderResult[] = [];
    for (let k = 0; k < names.length; k++) {
      const i = (k + round) % names.length;
      options.log(`turns: round ${round + 1}/${options.processes}, ${names[i]}`);
      results[i] = await inChild<ContenderResult>(['turns', set, baseURL, JSON.stringify(turnsOptions), names[i]!]);
    }
    rounds.push(withRatios(results, listed.contenders));
  }
  return { results: mergeProcessResults(rounds), notes: listed.notes, versions: listed.versions };
}

/** Sets each contender's ratios to its baseline measured in the same round. */
function withRatios(results: ContenderResult[], contenders: ContenderList['contenders']): ContenderResult[] {
  return results.map((result, i) => {
    const baseline = contenders[i]!.baseline;
    const base = results.find((r) => r.name === baseline);
    if (!base) return result;
    return {
      ...result,
      baseline,
      wallRatio: result.meanTurnWallUs / base.meanTurnWallUs,
      cpuRatio: result.meanTurnCpuUs / base.meanTurnCpuUs,
      flatnessCpuRatio: result.flatnessCpu / base.flatnessCpu,
    };
  });
}

/** The idle-thread rows: the target on the concurrency run's threads, and the longer conversation for reference. */
function memoryChecks(concurrency: ConcurrencyResult, long: LongThreadMemory): Check[] {
  if (concurrency.memoryRatio === undefined || long.memoryRatio === undefined) return []; // no --expose-gc
  const note = (m: IdleThreadMemory) => `${Math.round(m.heapBytesPerThread!)} B vs ${Math.round(m.jsonBytesPerThread)} B (${m.messagesPerThread} messages)`;
  return [
    check('heap per idle thread / JSON of its messages', concurrency.memoryRatio, 2, note(concurrency)),
    check(`same, ${long.turnsEach}-turn bench conversation / JSON`, long.memoryRatio, undefined, `${note(long)}, informational`),
  ];
}

/** "reps 1.04 1.12 0.99 ..." when the turns ran in several rounds of processes: each round's paired ratio, so one bad round shows. */
function spread(result: ContenderResult, key: 'wall' | 'cpu' | 'flatnessCpu'): string | undefined {
  const ratios = result.processRatios?.[key];
  if (!ratios || ratios.length < 2) return undefined;
  return `median of reps ${ratios.map((r) => r.toFixed(2)).join(' ')}`;
}

/**
 * Growth with history: CPU of turns 46-50 / turns 1-5. The SDK's own cost grows too (it
 * serializes the whole history per request), so the target is on Skein's growth over the SDK's,
 * paired per round; Skein's own value is shown beside it.
 */
function flatnessChecks(label: string, skein: ContenderResult, sdk: ContenderResult): Check[] {
  return [
    check(`${label} CPU, turns 46-50 / 1-5, over the SDK's`, skein.flatnessCpuRatio!, TARGETS.flatness, spread(skein, 'flatnessCpu')),
    check(
      `${label} CPU, turns 46-50 / 1-5`,
      skein.flatnessCpu,
      undefined,
      `wall ${skein.flatnessWall.toFixed(3)}x; ${sdk.name} itself: ${sdk.flatnessCpu.toFixed(3)}x CPU, ${sdk.flatnessWall.toFixed(3)}x wall`,
    ),
  ];
}

function checksOf(
  turns: ContenderResult[],
  peers: BenchResults['peers'],
  serialization: SerializationResult,
  concurrency: ConcurrencyResult,
  longMemory: LongThreadMemory,
  rss: ImportRssResult,
): Check[] {
  const by = (name: string) => turns.find((t) => t.name === name)!;
  const run = by('Skein run');
  const stream = by('Skein runStream');
  const sdk = by('openai SDK');
  const us = (r: ContenderResult) => `${Math.round(r.meanTurnWallUs)} us wall, ${Math.round(r.meanTurnCpuUs)} us CPU per turn`;
  const checks: Check[] = [
    check('agent.run wall / openai SDK', run.wallRatio!, TARGETS.run, `${us(run)} vs ${us(sdk)}; ${spread(run, 'wall') ?? ''}`),
    check('agent.run CPU / openai SDK', run.cpuRatio!, TARGETS.run, spread(run, 'cpu')),
    check('runStream wall / SDK stream (include_usage)', stream.wallRatio!, TARGETS.stream, `${us(stream)} vs ${us(by('openai SDK stream'))}; ${spread(stream, 'wall') ?? ''}`),
    check('runStream CPU / SDK stream (include_usage)', stream.cpuRatio!, TARGETS.stream, spread(stream, 'cpu')),
    ...flatnessChecks('agent.run', run, sdk),
    ...flatnessChecks('runStream', stream, by('openai SDK stream')),
    check(
      `serialize+deserialize / JSON, ${serialization.messages} msgs`,
      serialization.ratio,
      2,
      `${serialization.skeinMs.toFixed(1)} ms (${serialization.skeinSerializeMs.toFixed(1)} + ${serialization.skeinDeserializeMs.toFixed(1)}) vs ${serialization.jsonMs.toFixed(1)} ms, ${(serialization.jsonBytes / 1e6).toFixed(2)} MB`,
    ),
    check(
      `cross-talk in ${concurrency.conversations} concurrent conversations`,
      concurrency.crossTalk,
      0,
      `one agent, ${concurrency.turnsEach} turns each, ${Math.round(concurrency.wallMs)} ms in all`,
      'conversations',
    ),
  ];
  checks.push(...memoryChecks(concurrency, longMemory));
  checks.push(
    check('RSS import skein+skein/openai / openai', rss.ratio, 1.2, `${rss.skeinMiB.toFixed(1)} MiB vs ${rss.openaiMiB.toFixed(1)} MiB (bare node ${rss.nodeOnlyMiB.toFixed(1)})`),
    check(
      'RSS skein+skein/openai with a container / openai',
      rss.skeinWithContainerMiB / rss.openaiMiB,
      undefined,
      `${rss.skeinWithContainerMiB.toFixed(1)} MiB: createContainer loads inversify (informational)`,
    ),
  );
  for (const peer of peers?.results ?? []) {
    if (peer.baseline === undefined) continue;
    const note = `${Math.round(peer.meanTurnWallUs)} us wall, ${Math.round(peer.meanTurnCpuUs)} us CPU per turn; turns 46-50 / 1-5: ${peer.flatnessCpu.toFixed(2)}x CPU`;
    checks.push(check(`peers: ${peer.name} wall / ${peer.baseline}`, peer.wallRatio!, undefined, note));
    checks.push(check(`peers: ${peer.name} CPU / ${peer.baseline}`, peer.cpuRatio!, undefined));
  }
  return checks;
}

function rounded(value: unknown): unknown {
  if (typeof value === 'number') return round(value);
  if (Array.isArray(value)) return value.map(rounded);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rounded(v)]));
  return value;
}

export async function writeResults(results: BenchResults, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'latest.json'), JSON.stringify(rounded(results), null, 2) + '\n');
  const title = `Skein overhead, ${results.environment.node}, ${results.date.slice(0, 10)}`;
  await writeFile(path.join(dir, 'latest.svg'), renderSvg(results.checks, title));
}

/** One part of the bench: its rows only. */
export async function runPart(part: string, options: BenchOptions): Promise<Check[]> {
  if (part === 'memory') {
    const c = await runConcurrency(options.conversations);
    const long = await runLongThreadMemory(options.longMemoryThreads, options.longMemoryTurns);
    return [check(`cross-talk in ${c.conversations} concurrent conversations`, c.crossTalk, 0, undefined, 'conversations'), ...memoryChecks(c, long)];
  }
  if (part !== 'run' && part !== 'stream') throw new Error(`--only takes run, stream or memory, not "${part}"`);
  const server = await startFixedReplyServer();
  try {
    const names = part === 'run' ? ['openai SDK', 'Skein run'] : ['openai SDK stream', 'Skein runStream'];
    const [base, skein] = (await turnsInProcesses('core', server.baseURL, options, names)).results;
    const us = (r: ContenderResult) => `${Math.round(r.meanTurnWallUs)} us wall, ${Math.round(r.meanTurnCpuUs)} us CPU per turn`;
    const target = part === 'run' ? TARGETS.run : TARGETS.stream;
    return [
      check(`${skein!.name} wall / ${base!.name}`, skein!.wallRatio!, target, `${us(skein!)} vs ${us(base!)}; ${spread(skein!, 'wall') ?? ''}`),
      check(`${skein!.name} CPU / ${base!.name}`, skein!.cpuRatio!, target, spread(skein!, 'cpu')),
      ...flatnessChecks(skein!.name, skein!, base!),
    ];
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const onlyAt = args.indexOf('--only');
  const outAt = args.indexOf('--out');
  const here = path.dirname(fileURLToPath(import.meta.url));
  const out = outAt >= 0 ? path.resolve(args[outAt + 1]!) : path.resolve(here, '../../bench/results');
  const options: BenchOptions = {
    ...FULL,
    ...(quick ? { runs: 3, warmupRuns: 1, serializationIterations: 5, conversations: 200, rssSamples: 2, processes: 1, longMemoryThreads: 50, longMemoryTurns: 10 } : {}),
    peers: args.includes('--peers'),
    log: (line) => console.error(`bench: ${line}`),
  };
  // The turns part's sizes, for reading the noise or the warm-up (the targets are read on the defaults).
  const flag = (name: string) => {
    const at = args.indexOf(name);
    return at >= 0 ? Number(args[at + 1]) : undefined;
  };
  options.warmupRuns = flag('--warmup') ?? options.warmupRuns;
  options.runs = flag('--runs') ?? options.runs;
  if (!(globalThis as { gc?: unknown }).gc) console.error('bench: run with --expose-gc to measure heap per thread');
  if (onlyAt >= 0) {
    console.log(formatTable(await runPart(args[onlyAt + 1] ?? '', options)));
    return;
  }
  const results = await runBench(options);
  console.log(formatTable(results.checks));
  await writeResults(results, out);
  console.log(`\n${results.passed ? 'all targets met' : 'some targets missed'}; wrote ${path.relative(process.cwd(), out)}/latest.json and latest.svg`);
}

if (isEntryPoint(import.meta.url)) runMain(main);
