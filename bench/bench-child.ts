/**
 * Child process of `npm run bench`: runs one part in a fresh process (so JIT, GC and heap state
 * of one part never leak into another) and prints its result as JSON on stdout.
 *   node --expose-gc dist/bench/bench-child.js turns core|peers <baseURL> <TurnsOptions as JSON>
 *   node --expose-gc dist/bench/bench-child.js concurrency <conversations>
 */
import { runConcurrency } from './concurrency-bench.js';
import { loadPeerContenders } from './peers-bench.js';
import { coreContenders, runTurns, type TurnsOptions } from './turns-bench.js';

export interface TurnsChildOutput {
  results: Awaited<ReturnType<typeof runTurns>>;
  notes: string[];
  versions: Record<string, string>;
}

async function turns(set: string | undefined, baseURL: string | undefined, optionsJson: string | undefined): Promise<TurnsChildOutput> {
  if ((set !== 'core' && set !== 'peers') || !baseURL || !optionsJson) throw new Error('usage: bench-child.js turns core|peers <baseURL> <options JSON>');
  const options = JSON.parse(optionsJson) as TurnsOptions;
  const contenders = coreContenders(baseURL);
  const output: TurnsChildOutput = { results: [], notes: [], versions: {} };
  if (set === 'peers') {
    const loaded = await loadPeerContenders(baseURL);
    output.notes = loaded.notes;
    output.versions = loaded.versions;
    // No peer installed: nothing to compare, so no turns to run.
    if (loaded.contenders.length === 0) return output;
    contenders.push(...loaded.contenders);
  }
  output.results = await runTurns(contenders, options);
  return output;
}

const [part, ...args] = process.argv.slice(2);
const result = part === 'turns' ? await turns(args[0], args[1], args[2]) : part === 'concurrency' ? await runConcurrency(Number(args[0])) : undefined;
if (result === undefined) throw new Error(`bench-child.js: unknown part "${part}"; expected turns or concurrency`);
process.stdout.write(JSON.stringify(result));
process.exit(0);
