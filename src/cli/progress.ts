const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * A spinner on stderr while waiting (e.g. for a reply's first token). It draws only on a
 * terminal: piped or redirected output stays plain, with nothing to strip.
 */
export class Progress {
  #timer: NodeJS.Timeout | undefined;
  #frame = 0;
  #label = '';

  constructor(
    private readonly stream: NodeJS.WritableStream & { isTTY?: boolean },
    private readonly enabled = stream.isTTY === true,
  ) {}

  start(label: string): void {
    if (!this.enabled) return;
    this.stop();
    this.#label = label;
    this.#draw();
    this.#timer = setInterval(() => this.#draw(), 80);
    // A spinner must never keep the process alive on its own.
    this.#timer.unref();
  }

  stop(): void {
    if (!this.#timer) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.stream.write('\r\x1b[K');
  }

  #draw(): void {
    this.stream.write(`\r${FRAMES[this.#frame++ % FRAMES.length]} ${this.#label}`);
  }
}
