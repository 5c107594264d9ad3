import type { Interface } from 'node:readline';

/**
 * Pulls lines from a readline interface one at a time. Lines typed (or piped) while a reply is
 * streaming wait their turn instead of starting a second run.
 */
export class LineReader {
  readonly #lines: string[] = [];
  #waiting: ((line: string | undefined) => void) | undefined;
  #closed = false;

  constructor(private readonly rl: Interface) {
    rl.on('line', (line: string) => {
      if (this.#waiting) {
        const resolve = this.#waiting;
        this.#waiting = undefined;
        resolve(line);
      } else {
        this.#lines.push(line);
      }
    });
    rl.on('close', () => {
      this.#closed = true;
      this.#waiting?.(undefined);
      this.#waiting = undefined;
    });
  }

  /** The next line, or undefined once the input ended (or close() was called) and nothing is left. */
  next(): Promise<string | undefined> {
    if (this.#lines.length) return Promise.resolve(this.#lines.shift());
    if (this.#closed) return Promise.resolve(undefined);
    return new Promise((resolve) => (this.#waiting = resolve));
  }

  close(): void {
    this.#lines.length = 0;
    this.rl.close();
  }
}
