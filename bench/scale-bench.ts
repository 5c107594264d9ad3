/**
 * `npm run bench:scale`: 1,000 concurrent streaming conversations in one process against the
 * fixed-reply server, Skein `runStream` vs the raw SDK's own stream (with `include_usage`), each
 * contender alone in a fresh process, in rounds with the order rotating; ratios paired per round.
 *   node --expose-gc dist/bench/scale-bench.js [--conversations 1000] [--turns 3] [--rounds 5] [--quick]
 * Per contender: RSS and heap per idle thread (conversations run ten at a time, then held idle:
 * after forced GCs, over before them), then all conversations at once: turns per second, CPU per
 * turn, event-loop delay (perf_hooks.monitorEventLoopDelay, p50/p99/max over that phase), RSS and
 * heap per active run (peak while they run, over the idle reading). Last, one more turn of each of
 * those conversations with the server holding its replies: heap per run in flight (after forced
 * GCs, over before them), the live state of a run waiting for its reply with no garbage in it.
 */
import { execFile } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { FIXED_REPLY_TEXT, serverControl, startFixedReplyServer } from './fixed-reply-server.js';
import { type Check, check, formatTable } from './report.js';
import { median } from './stats.js';
import { isEntryPoint, runMain } from './bench-main.js';
import { type Contender, sdkStreamContender, skeinStreamContender, userText } from './turns-bench.js';

export interface ScaleResult {
  contender: string;
  conversations: number;
  turnsEach: number;
  turnsPerSecond: number;
  cpuUsPerTurn: number;
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  /** Peak RSS / heap while all conversations run at once, over the idle reading, per conversation. */
  rssBytesPerActiveRun: number;
  heapBytesPerActiveRun: number;
  /** RSS / heap with the idle threads held (after forced GCs), over before them, per thread. */
  rssBytesPerIdleThread: number;
  heapBytesPerIdleThread: number;
  /** Heap with every conversation's next turn waiting for its reply (after forced GCs), over before, per run. */
  heapBytesPerRunInFlight: number;
}

export const CONTENDERS: Record<string, (baseURL: string) => Contender> = {
  'openai SDK stream': (baseURL) => sdkStreamContender(baseURL),
  'Skein runStream': (baseURL) => skeinStreamContender(baseURL),
};

type Gc = () => void;

/** Heap and RSS after full collections (yielding first, so finished requests let go). */
async function settled(): Promise<{ rss: number; heap: number }> {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (!gc) throw new Error('scale-bench.js: run with node --expose-gc');
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    gc();
  }
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap: usage.heapUsed };
}

/** `conversations` conversations of `turns` turns, `atOnce` of them running at a time. */
export async function converse(contender: Contender, conversations: number, turns: number, atOnce = conversations): Promise<ReturnType<Contender['newConversation']>[]> {
  const all = Array.from({ length: conversations }, () => contender.newConversation());
  for (let from = 0; from < conversations; from += atOnce) {
    await Promise.all(
      all.slice(from, from + atOnce).map(async (conversation, i) => {
        for (let t = 0; t < turns; t++) {
          const reply = await conversation.turn(userText(t));
          if (reply !== FIXED_REPLY_TEXT) throw new Error(`${contender.name}: conversation ${from + i + 1} turn ${t + 1} got ${JSON.stringify(reply)}`);
        }
      }),
    );
  }
  return all;
}

/**
 * One contender alone in this process. Idle threads first: conversations run a few at a time
 * (so neither their peak nor many sockets are counted) and are then held, idle. Then as many
 * new conversations all at once, measured while they run.
 */
export async function measureScale(name: string, baseURL: string, conversations: number, turns: number): Promise<ScaleResult> {
  const make = CONTENDERS[name];
  if (!make) throw new Error(`scale-bench.js: no contender "${name}"; expected ${Object.keys(CONTENDERS).join(' or ')}`);
  const contender = make(baseURL);
  await converse(contender, 50, turns, 10); // warm-up: JIT, the connection pool
  const before = await settled();
  const idleThreads = await converse(contender, conversations, turns, 10);
  const idle = await settled();

  const delay = monitorEventLoopDelay({ resolution: 1 });
  let peak = { rss: 0, heap: 0 };
  const sample = () => {
    const usage = process.memoryUsage();
    peak = { rss: Math.max(peak.rss, usage.rss), heap: Math.max(peak.heap, usage.heapUsed) };
  };
  const sampler = setInterval(sample, 5);
  delay.enable();
  const cpu = process.cpuUsage();
  const start = performance.now();
  const active = await converse(contender, conversations, turns);
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  delay.disable();
  clearInterval(sampler);
  sample();
  const inFlight = await heldTurns(contender, active, turns, baseURL);
  // Checked after the readings, so the idle threads are held through all of them.
  if (idleThreads.length !== conversations) throw new Error(`scale-bench.js: ${idleThreads.length} idle threads, expected ${conversations}`);
  return {
    contender: name,
    conversations,
    turnsEach: turns,
    turnsPerSecond: (conversations * turns) / seconds,
    cpuUsPerTurn: (used.user + used.system) / (conversations * turns),
    eventLoopDelayMs: { p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 },
    rssBytesPerActiveRun: (peak.rss - idle.rss) / conversations,
    heapBytesPerActiveRun: (peak.heap - idle.heap) / conversations,
    rssBytesPerIdleThread: (idle.rss - before.rss) / conversations,
    heapBytesPerIdleThread: (idle.heap - before.heap) / conversations,
    heapBytesPerRunInFlight: inFlight,
  };
}

/**
 * One more turn of every conversation, all waiting at once for replies the server holds: the
 * heap they hold (after forced GCs, over before them) per run. Unlike the peak, no garbage and
 * no collection timing is in it.
 */
async function heldTurns(contender: Contender, conversations: ReturnType<Contender['newConversation']>[], turn: number, baseURL: string): Promise<number> {
  const before = await settled();
  await serverControl(baseURL, 'hold');
  const replies = conversations.map((conversation) => conversation.turn(userText(turn)));
  while ((await serverControl(baseURL, 'held')) < conversations.length) await new Promise((resolve) => setTimeout(resolve, 20));
  const waiting = await settled();
  await serverControl(baseURL, 'release');
  for (const reply of await Promise.all(replies)) {
    if (reply !== FIXED_REPLY_TEXT) throw new Error(`${contender.name}: a held turn got ${JSON.stringify(reply)}`);
  }
  return (waiting.heap - before.heap) / conversations.length;
}

export interface ScaleOptions {
  conversations: number;
  turns: number;
  rounds: number;
  log: (line: string) => void;
}

export interface ScaleRun {
  rounds: ScaleResult[][];
  checks: Check[];
}

const child = fileURLToPath(import.meta.url);

/** Rounds of one fresh process per contender, order rotating; ratios Skein / SDK per round, then their median. */
export async function runScale(options: ScaleOptions): Promise<ScaleRun> {
  const server = await startFixedReplyServer();
  const names = Object.keys(CONTENDERS);
  const rounds: ScaleResult[][] = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      const results: ScaleResult[] = [];
      for (let k = 0; k < names.length; k++) {
        const i = (k + round) % names.length;
        options.log(`round ${round + 1}/${options.rounds}: ${names[i]}, ${options.conversations} conversations x ${options.turns} turns at once`);
        const args = ['--expose-gc', child, '--child', names[i]!, server.baseURL, String(options.conversations), String(options.turns)];
        const { stdout } = await promisify(execFile)(process.execPath, args, { maxBuffer: 16 * 2 ** 20 });
        results[i] = JSON.parse(stdout) as ScaleResult;
      }
      rounds.push(results);
    }
  } finally {
    await server.stop();
  }
  return { rounds, checks: scaleChecks(rounds) };
}

function scaleChecks(rounds: ScaleResult[][]): Check[] {
  const [sdk, skein] = [0, 1].map((i) => rounds.map((r) => r[i]!));
  const paired = (pick: (r: ScaleResult) => number) => rounds.map((_, i) => pick(skein![i]!) / pick(sdk![i]!));
  const reps = (ratios: number[]) => `median of reps ${ratios.map((r) => r.toFixed(2)).join(' ')}`;
  const mid = (results: ScaleResult[], pick: (r: ScaleResult) => number) => median(results.map(pick));
  const both = (pick: (r: ScaleResult) => number, unit: string, digits = 0) => `${mid(skein!, pick).toFixed(digits)} vs ${mid(sdk!, pick).toFixed(digits)} ${unit}`;
  /** The paired ratio of `pick`; the note shows `shown` (default `pick`) for Skein vs the SDK. */
  const row = (metric: string, pick: (r: ScaleResult) => number, target: number | undefined, unit: string, digits = 0, shown = pick) => {
    const ratios = paired(pick);
    return check(metric, median(ratios), target, `${both(shown, unit, digits)}; ${reps(ratios)}`);
  };
  const n = sdk![0]!;
  return [
    row(`time per turn / SDK (throughput, ${n.conversations} concurrent streams x ${n.turnsEach} turns)`, (r) => 1 / r.turnsPerSecond, undefined, 'turns/s', 0, (r) => r.turnsPerSecond),
    row('CPU per turn / SDK', (r) => r.cpuUsPerTurn, undefined, 'us'),
    row('event-loop delay p99 / SDK', (r) => r.eventLoopDelayMs.p99, 1.2, 'ms', 1),
    row('event-loop delay max / SDK', (r) => r.eventLoopDelayMs.max, undefined, 'ms', 1),
    row('RSS per active run / SDK', (r) => r.rssBytesPerActiveRun, 1.2, 'B'),
    row('heap per active run / SDK', (r) => r.heapBytesPerActiveRun, undefined, 'B'),
    row('heap per run in flight (live) / SDK', (r) => r.heapBytesPerRunInFlight, undefined, 'B'),
    row('RSS per idle thread / SDK', (r) => r.rssBytesPerIdleThread, 1.2, 'B'),
    row('heap per idle thread / SDK', (r) => r.heapBytesPerIdleThread, undefined, 'B'),
  ];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === '--child') {
    const [, name, baseURL, conversations, turns] = args;
    process.stdout.write(JSON.stringify(await measureScale(name!, baseURL!, Number(conversations), Number(turns))));
    return;
  }
  const flag = (name: string, fallback: number) => {
    const at = args.indexOf(name);
    return at >= 0 ? Number(args[at + 1]) : fallback;
  };
  const quick = args.includes('--quick');
  const run = await runScale({
    conversations: flag('--conversations', quick ? 100 : 1000),
    turns: flag('--turns', 3),
    // Five: a round's RSS ratio moves by ±0.08 with where the full collections fall.
    rounds: flag('--rounds', quick ? 1 : 5),
    log: (line) => console.error(`bench:scale: ${line}`),
  });
  for (const results of run.rounds) for (const r of results) console.error(JSON.stringify(r));
  console.log(formatTable(run.checks));
}

if (isEntryPoint(import.meta.url)) runMain(main);
