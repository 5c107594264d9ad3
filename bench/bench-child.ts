/**
 * Child process of `npm run bench`: runs one part in a fresh process (so JIT, GC and heap state
 * of one part never leak into another) and prints its result as JSON on stdout.
 *   node --expose-gc dist/bench/bench-child.js contenders core|peers <baseURL>
 *   node --expose-gc dist/bench/bench-child.js turns core|peers <baseURL> <TurnsOptions as JSON> <contender name>
 *   node --expose-gc dist/bench/bench-child.js concurrency <conversations>
 *   node --expose-gc dist/bench/bench-child.js long-memory <threads> <turns each>
 */
import { runConcurrency, runLongThreadMemory } from './concurrency-bench.js';
import { loadPeerContenders } from './peers-bench.js';
import { type Contender, type ContenderResult, coreContenders, measureTurns, type TurnsOptions } from './turns-bench.js';

export interface ContenderList {
  contenders: { name: string; baseline?: string }[];
  notes: string[];
  versions: Record<string, string>;
}

async function contendersOf(set: string | undefined, baseURL: string | undefined): Promise<{ contenders: Contender[]; notes: string[]; versions: Record<string, string> }> {
  if ((set !== 'core' && set !== 'peers') || !baseURL) throw new Error(`bench-child.js: expected a set (core or peers) and a base URL, found ${set} ${baseURL}`);
  const core = coreContenders(baseURL);
  if (set === 'core') return { contenders: core, notes: [], versions: {} };
  const loaded = await loadPeerContenders(baseURL);
  return { contenders: [...core, ...loaded.contenders], notes: loaded.notes, versions: loaded.versions };
}

async function list(set: string | undefined, baseURL: string | undefined): Promise<ContenderList> {
  const { contenders, notes, versions } = await contendersOf(set, baseURL);
  return { contenders: contenders.map(({ name, baseline }) => ({ name, baseline })), notes, versions };
}

/** One contender alone in this process: what an app using only it would pay. */
async function turnsOf(set: string | undefined, baseURL: string | undefined, optionsJson: string | undefined, name: string | undefined): Promise<ContenderResult> {
  // A core contender's process never loads the peers (their imports are heavy, and an app would not have them).
  const byName = (contenders: Contender[]) => contenders.find((c) => c.name === name);
  const contender = byName(baseURL ? coreContenders(baseURL) : []) ?? byName((await contendersOf(set, baseURL)).contenders);
  if (!contender || !optionsJson) throw new Error(`bench-child.js: no contender "${name}" in set ${set}`);
  return measureTurns(contender, JSON.parse(optionsJson) as TurnsOptions);
}

const [part, ...args] = process.argv.slice(2);
const result =
  part === 'contenders'
    ? await list(args[0], args[1])
    : part === 'turns'
      ? await turnsOf(args[0], args[1], args[2], args[3])
      : part === 'concurrency'
        ? await runConcurrency(Number(args[0]))
        : part === 'long-memory'
          ? await runLongThreadMemory(Number(args[0]), Number(args[1]))
          : undefined;
if (result === undefined) throw new Error(`bench-child.js: unknown part "${part}"; expected contenders, turns, concurrency or long-memory`);
process.stdout.write(JSON.stringify(result));
process.exit(0);
