/**
 * `npm run bench:ag-ui`: server CPU per turn of an agent served over AG-UI (AgUiServer, driven by
 * @ag-ui/client's HttpAgent, which sends the whole history each run, as web pages do) against the
 * same agent's `runStream` called directly in one process (goal: at most 1.1x).
 *   node dist/bench/ag-ui/ag-ui-bench.js [--quick] [--out <file>] [--cpu-prof <dir>]
 *   node dist/bench/ag-ui/ag-ui-bench.js --count [measured runs=3] [--warmup runs=1] [--only ag-ui|direct|bare-http]
 * `--count` counts instructions per turn instead (valgrind --tool=callgrind, not moved by the
 * machine's load): per contender, one process with the warm-up runs only and one with `measured`
 * more runs; the difference over their turns is the cost of a warm turn. Slow (minutes).
 * (`--cpu-prof <dir>` writes a CPU profile of each contender process there, for `node --cpu-prof` analysis.)
 *
 * All contenders run the same ChatAgent (in-memory threads) against the fixed-reply model server
 * (its own process; it costs them the same), each in its own fresh process per round. A third
 * contender, `bare-http` (see ag-ui-bench-server.ts), is the least an HTTP AG-UI server over the
 * same agent does: the ratio over it says what AgUiServer adds beyond serving HTTP and SSE at all
 * (informational; the goal stays AG-UI server / direct).
 * A run is `conversations` new threads in parallel, `turns` turns each. The measure is the
 * contender process's CPU time (user + system, asked over IPC before and after the run) per turn;
 * the client's CPU (here) is not counted. Runs are taken in sets, one on each contender back to
 * back, the order rotating; each ratio is the median of the sets' ratios.
 */
import { HttpAgent } from '@ag-ui/client';
import { type ChildProcess, fork } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { startFixedReplyServer } from '../fixed-reply-server.js';
import { median, quantile, round } from '../stats.js';
import { userText } from '../turns-bench.js';
import type { AgUiContenderName } from './ag-ui-bench-server.js';

interface Options {
  rounds: number;
  pairs: number;
  conversations: number;
  turns: number;
}
const FULL: Options = { rounds: 3, pairs: 6, conversations: 10, turns: 8 }; // pairs: sets of one run per contender
const QUICK: Options = { rounds: 1, pairs: 2, conversations: 5, turns: 4 };
// Under callgrind a turn takes ~1 s: few conversations at once keep the count run short (the
// contender also lengthens its servers' keep-alive timeout, see ag-ui-bench-server.ts).
const COUNT: Options = { rounds: 1, pairs: 0, conversations: 3, turns: 8 };

interface Contender {
  url: string;
  child: ChildProcess;
  ask<T>(message: object): Promise<T>;
}

const args = process.argv.slice(2);
const profileDir = args.includes('--cpu-prof') ? args[args.indexOf('--cpu-prof') + 1] : undefined;
const serverScript = fileURLToPath(new URL('./ag-ui-bench-server.js', import.meta.url));

function start(name: AgUiContenderName, modelBaseURL: string, underCallgrind = false): Promise<Contender> {
  const execArgv = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-name', `${name}-${Date.now()}.cpuprofile`] : [];
  // Under callgrind: `valgrind ... node --single-threaded <script>` (JIT and GC counted on the one thread); its summary goes to stderr.
  const child = underCallgrind
    ? fork(serverScript, [name, modelBaseURL], { stdio: ['ignore', 'inherit', 'pipe', 'ipc'], execPath: 'valgrind', execArgv: ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, '--single-threaded'], env: { ...process.env, AG_UI_BENCH_COUNT: '1' } })
    : fork(serverScript, [name, modelBaseURL], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the ${name} contender exited (code ${code}) before it was ready`)));
    child.once('message', (message) => {
      child.removeAllListeners('exit');
      const ask = <T>(m: object) => new Promise<T>((done) => (child.once('message', (reply) => done(reply as T)), child.send(m)));
      resolve({ url: (message as { url: string }).url, child, ask });
    });
  });
}

async function run(name: AgUiContenderName, contender: Contender, options: Options): Promise<number> {
  const before = (await contender.ask<{ cpuUs: number }>({ cpu: true })).cpuUs;
  if (name === 'direct') await contender.ask({ run: { conversations: options.conversations, turns: options.turns } });
  else {
    await Promise.all(
      Array.from({ length: options.conversations }, async () => {
        const agent = new HttpAgent({ url: contender.url });
        for (let t = 0; t < options.turns; t++) {
          agent.addMessage({ id: `u-${t}-${Math.random()}`, role: 'user', content: userText(t) });
          await agent.runAgent();
        }
      }),
    );
  }
  const after = (await contender.ask<{ cpuUs: number }>({ cpu: true })).cpuUs;
  return (after - before) / (options.conversations * options.turns);
}

const options = args.includes('--count') ? COUNT : args.includes('--quick') ? QUICK : FULL;
const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : undefined;
const model = await startFixedReplyServer();
if (args.includes('--count')) {
  const measured = Number(args[args.indexOf('--count') + 1]) || 3;
  const warmup = args.includes('--warmup') ? Number(args[args.indexOf('--warmup') + 1]) : 1;
  /** Instructions of one contender process: `runs` runs after the warm-up run, then exit. */
  const count = async (name: AgUiContenderName, runs: number): Promise<number> => {
    const contender = await start(name, model.baseURL, true);
    let stderr = '';
    contender.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise((done) => contender.child.once('exit', done));
    for (let r = 0; r < warmup + runs; r++) await run(name, contender, options);
    contender.child.disconnect();
    await exited;
    const collected = /Collected : (\d+)/.exec(stderr);
    if (!collected) throw new Error(`callgrind printed no count for ${name}: ${stderr.slice(-500)}`);
    return Number(collected[1]);
  };
  const perTurn = {} as Record<AgUiContenderName, number>;
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
  for (const name of ['ag-ui', 'direct', 'bare-http'] as const) {
    if (only !== undefined && only !== name) continue;
    const base = await count(name, 0);
    const more = await count(name, measured);
    perTurn[name] = Math.round((more - base) / (measured * options.conversations * options.turns));
    console.log(`${name}: ${perTurn[name]} instructions per turn (${measured} measured runs of ${options.conversations} x ${options.turns} turns after ${warmup} warm-up runs)`);
  }
  if (only === undefined) {
    console.log(`instructions ratio AG-UI server / runStream directly: ${round(perTurn['ag-ui'] / perTurn.direct, 3)}x`);
    console.log(`instructions ratio AG-UI server / bare HTTP server: ${round(perTurn['ag-ui'] / perTurn['bare-http'], 3)}x`);
  }
  await model.stop();
  process.exit(0);
}
const NAMES = ['ag-ui', 'direct', 'bare-http'] as const;
const perTurn: Record<AgUiContenderName, number[]> = { 'ag-ui': [], direct: [], 'bare-http': [] };
/** Per set of runs (one run per contender, back to back, the order rotating): AG-UI / direct (the goal), AG-UI / bare HTTP, bare HTTP / direct. */
const ratios = { goal: [] as number[], overBareHttp: [] as number[], bareHttpOverDirect: [] as number[] };
for (let r = 0; r < options.rounds; r++) {
  const contenders = {} as Record<AgUiContenderName, Contender>;
  for (const name of NAMES) contenders[name] = await start(name, model.baseURL);
  for (const name of NAMES) await run(name, contenders[name], options); // warm-up
  for (let p = 0; p < options.pairs; p++) {
    const order = [...NAMES.slice(p % 3), ...NAMES.slice(0, p % 3)];
    const set = {} as Record<AgUiContenderName, number>;
    for (const name of order) set[name] = await run(name, contenders[name], options);
    for (const name of NAMES) perTurn[name].push(set[name]);
    ratios.goal.push(set['ag-ui'] / set.direct);
    ratios.overBareHttp.push(set['ag-ui'] / set['bare-http']);
    ratios.bareHttpOverDirect.push(set['bare-http'] / set.direct);
  }
  // A disconnected contender exits on its own (writing its profile); a killed one would not write it.
  for (const c of Object.values(contenders)) {
    if (profileDir) c.child.disconnect();
    else c.child.kill();
  }
}
await model.stop();
const quartiles = (xs: number[]) => [round(quantile(xs, 0.25), 3), round(quantile(xs, 0.75), 3)];
const results = {
  date: new Date().toISOString(),
  environment: { node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? '', loadAverage: os.loadavg().map((l) => round(l, 2)) },
  options,
  agUiCpuUsPerTurn: round(median(perTurn['ag-ui']), 0),
  directCpuUsPerTurn: round(median(perTurn.direct), 0),
  bareHttpCpuUsPerTurn: round(median(perTurn['bare-http']), 0),
  cpuRatio: round(median(ratios.goal), 3),
  ratioQuartiles: quartiles(ratios.goal),
  cpuRatioOverBareHttp: round(median(ratios.overBareHttp), 3),
  overBareHttpQuartiles: quartiles(ratios.overBareHttp),
  bareHttpOverDirect: round(median(ratios.bareHttpOverDirect), 3),
  goal: 1.1,
};
const n = ratios.goal.length;
console.log(`CPU per turn (median): AG-UI server ${results.agUiCpuUsPerTurn} µs; runStream directly ${results.directCpuUsPerTurn} µs; bare HTTP + SSE server over runStream ${results.bareHttpCpuUsPerTurn} µs`);
console.log(`AG-UI server / runStream directly (the goal): ${results.cpuRatio}x (median of ${n} sets, quartiles ${results.ratioQuartiles.join('-')}); goal <= ${results.goal}x: ${results.cpuRatio <= results.goal ? 'met' : 'NOT met'}`);
console.log(`AG-UI server / bare HTTP server (what AgUiServer adds over serving HTTP at all): ${results.cpuRatioOverBareHttp}x (quartiles ${results.overBareHttpQuartiles.join('-')})`);
console.log(`bare HTTP server / runStream directly (what HTTP + SSE alone cost): ${results.bareHttpOverDirect}x`);
if (out) await writeFile(out, JSON.stringify(results, undefined, 2) + '\n');
