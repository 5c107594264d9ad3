/**
 * Runs work one at a time per key, in the order it arrives; different keys run side by side. A
 * failed piece of work does not stop the ones queued after it. Keys with nothing queued are
 * forgotten, so the map holds only keys in use.
 *
 * @example
 * const turns = new SerialByKey();
 * await turns.run(threadId, () => agent.run(input, { thread }));
 */
export class SerialByKey {
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return next;
  }

  /** How many keys have work queued or running. */
  get size(): number {
    return this.#tails.size;
  }
}
