/**
 * `list.map(fn)` as a packed array. Once V8's optimizing compiler inlines `Array.prototype.map`,
 * the arrays it makes are holey: a holey array reaching code optimized for packed ones (the
 * store's history, the history sent to the model, a turn's replies) throws that code back to
 * the interpreter and has it compiled again (`--trace-deopt`: "wrong map" in `#executeTurn`,
 * `#commit`, the store's reads and the Chat Completions mapping, once per process, each a
 * recompilation of a large function in the bench's window). Used on what every turn maps.
 */
export function mapPacked<T, U>(list: readonly T[], fn: (item: T) => U): U[] {
  const out: U[] = [];
  for (let i = 0; i < list.length; i++) out.push(fn(list[i]!));
  return out;
}
