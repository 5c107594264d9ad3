/** Deterministic ids per emulator instance: `chatcmpl-1`, `call_1`, `call_2`, ... */
export class IdGenerator {
  private readonly counters = new Map<string, number>();

  /** The next id for a prefix; each prefix counts on its own. */
  next(prefix: string): string {
    const count = (this.counters.get(prefix) ?? 0) + 1;
    this.counters.set(prefix, count);
    return `${prefix}${count}`;
  }
}
