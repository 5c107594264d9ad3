/**
 * `npm run bench:ag-ui`: server CPU per turn of an agent served over AG-UI (AgUiServer, driven by
 * @ag-ui/client's HttpAgent, which sends the whole history each run, as web pages do) against the
 * same agent's `runStream` called directly in one process (goal: at most 1.1x).
 *   node dist/bench/ag-ui/ag-ui-bench.js [--quick] [--out <file>] [--cpu-prof <dir>]
 *   node dist/bench/ag-ui/ag-ui-bench.js --count [measured runs=2] [--quick] [--only ag-ui|direct]
 * `--count` counts instructions per turn instead (valgrind --tool=callgrind, not moved by the
 * machine's load): per contender, one process with the warm-up runs only and one with `measured`
 * more runs; the difference over their turns is the cost of a warm turn. Slow (minutes).
 * (`--cpu-prof <dir>` writes a CPU profile of each contender process there, for `node --cpu-prof` analysis.)
 *
 * Both contenders run the same ChatAgent (in-memory threads) against the fixed-reply model server
 * (its own process; it costs both the same), each in its own fresh process per round.
 * A run is `conversations` new threads in parallel, `turns` turns each. The measure is the
 * contender process's CPU time (user + system, asked over IPC before and after the run) per turn;
 * the client's CPU (here) is not counted. Runs are taken in pairs, one on each contender back to
 * back, the order alternating; the ratio is the median of the pairs' ratios.
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
const FULL: Options = { rounds: 3, pairs: 6, conversations: 10, turns: 8 };
const QUICK: Options = { rounds: 1, pairs: 2, conversations: 5, turns: 4 };

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
    ? fork(serverScript, [name, modelBaseURL], { stdio: ['ignore', 'inherit', 'pipe', 'ipc'], execPath: 'valgrind', execArgv: ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, '--single-threaded'] })
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

const options = args.includes('--quick') ? QUICK : FULL;
const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : undefined;
const model = await startFixedReplyServer();
if (args.includes('--count')) {
  const measured = Number(args[args.indexOf('--count') + 1]) || 2;
  /** Instructions of one contender process: `runs` runs after the warm-up run, then exit. */
  const count = async (name: AgUiContenderName, runs: number): Promise<number> => {
    const contender = await start(name, model.baseURL, true);
    let stderr = '';
    contender.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise((done) => contender.child.once('exit', done));
    for (let r = 0; r < 1 + runs; r++) await run(name, contender, options);
    contender.child.disconnect();
    await exited;
    const collected = /Collected : (\d+)/.exec(stderr);
    if (!collected) throw new Error(`callgrind printed no count for ${name}: ${stderr.slice(-500)}`);
    return Number(collected[1]);
  };
  const perTurn = {} as Record<AgUiContenderName, number>;
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
  for (const name of ['ag-ui', 'direct'] as const) {
    if (only !== undefined && only !== name) continue;
    const base = await count(name, 0);
    const more = await count(name, measured);
    perTurn[name] = Math.round((more - base) / (measured * options.conversations * options.turns));
    console.log(`${name}: ${perTurn[name]} instructions per turn (${measured} measured runs of ${options.conversations} x ${options.turns} turns)`);
  }
  if (only === undefined) console.log(`instructions ratio AG-UI server / runStream directly: ${round(perTurn['ag-ui'] / perTurn.direct, 3)}x`);
  await model.stop();
  process.exit(0);
}
const ratios: number[] = [];
const perTurn: Record<AgUiContenderName, number[]> = { 'ag-ui': [], direct: [] };
for (let r = 0; r < options.rounds; r++) {
  const contenders = { 'ag-ui': await start('ag-ui', model.baseURL), direct: await start('direct', model.baseURL) };
  for (const name of ['ag-ui', 'direct'] as const) await run(name, contenders[name], options); // warm-up
  for (let p = 0; p < options.pairs; p++) {
    const order: AgUiContenderName[] = p % 2 ? ['direct', 'ag-ui'] : ['ag-ui', 'direct'];
    const pair = {} as Record<AgUiContenderName, number>;
    for (const name of order) pair[name] = await run(name, contenders[name], options);
    perTurn['ag-ui'].push(pair['ag-ui']);
    perTurn.direct.push(pair.direct);
    ratios.push(pair['ag-ui'] / pair.direct);
  }
  // A disconnected contender exits on its own (writing its profile); a killed one would not write it.
  for (const c of Object.values(contenders)) (profileDir ? c.child.disconnect() : c.child.kill());
}
await model.stop();
const results = {
  date: new Date().toISOString(),
  environment: { node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? '', loadAverage: os.loadavg().map((l) => round(l, 2)) },
  options,
  agUiCpuUsPerTurn: round(median(perTurn['ag-ui']), 0),
  directCpuUsPerTurn: round(median(perTurn.direct), 0),
  cpuRatio: round(median(ratios), 3),
  ratioQuartiles: [round(quantile(ratios, 0.25), 3), round(quantile(ratios, 0.75), 3)],
  goal: 1.1,
};
console.log(`AG-UI server CPU per turn: ${results.agUiCpuUsPerTurn} µs; runStream directly: ${results.directCpuUsPerTurn} µs`);
console.log(`ratio (median of ${ratios.length} pairs): ${results.cpuRatio}x (quartiles ${results.ratioQuartiles.join('-')}); goal <= ${results.goal}x: ${results.cpuRatio <= results.goal ? 'met' : 'NOT met'}`);
if (out) await writeFile(out, JSON.stringify(results, undefined, 2) + '\n');
