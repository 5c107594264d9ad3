/**
 * Bytes allocated per turn by one contender, in memory (see turn-cost.ts): with a young generation
 * larger than the window (run with the flags below), nothing is collected inside it, so the heap's
 * growth over two conversations is what their turns allocated. Unlike CPU time and callgrind
 * counts (which move with where collections fall), a build gives the same numbers run after run,
 * so a change of a few hundred bytes per turn is visible. Prints the bytes per turn of each rep
 * (reps differ from each other by where the JIT works, the same way every run) and their mean:
 *   node --expose-gc --single-threaded --min-semi-space-size=128 --max-semi-space-size=128 \
 *     dist/bench/turn-allocation.js "Skein runStream (no SDK)" [reps=5] [warm-up conversations=30]
 */
import v8 from 'node:v8';
import { inMemoryContender } from './turn-cost.js';
import { userText } from './turns-bench.js';

const TURNS = 50;
const [name = 'Skein runStream (no SDK)', reps = '5', warmup = '30'] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('turn-allocation.js needs node --expose-gc (and a 128 MiB young generation, see the header)');
const contender = inMemoryContender(name);
async function conversation(): Promise<void> {
  const c = contender.newConversation();
  for (let t = 0; t < TURNS; t++) await c.turn(userText(t));
}
for (let i = 0; i < Number(warmup); i++) await conversation();
const perRep: number[] = [];
for (let rep = 0; rep < Number(reps); rep++) {
  gc();
  gc();
  const before = v8.getHeapStatistics().used_heap_size;
  await conversation();
  await conversation();
  perRep.push(Math.round((v8.getHeapStatistics().used_heap_size - before) / (2 * TURNS)));
}
console.log(JSON.stringify({ contender: name, bytesPerTurn: Math.round(perRep.reduce((a, b) => a + b, 0) / perRep.length), perRep }));
