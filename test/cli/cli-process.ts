import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/** The built CLI entry point, as the `skein` bin runs it. */
export const CLI_MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface CliOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  main?: string;
}

/** A running `skein` process driven through its stdin/stdout/stderr pipes. */
export class CliProcess {
  readonly child: ChildProcessWithoutNullStreams;
  stdout = '';
  stderr = '';
  readonly #exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #waiters: (() => void)[] = [];
  #closed = false;

  /** `main` runs another copy of the CLI (e.g. through a symlinked install); `env` replaces the environment. */
  constructor(args: readonly string[], options: CliOptions) {
    this.child = spawn(process.execPath, [options.main ?? CLI_MAIN, ...args], { cwd: options.cwd, env: { ...(options.env ?? process.env), NO_COLOR: '1' } });
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      this.#notify();
    });
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
      this.#notify();
    });
    this.#exited = once(this.child, 'close').then(([code, signal]) => {
      this.#closed = true;
      this.#notify();
      return { code: code as number | null, signal: signal as NodeJS.Signals | null };
    });
  }

  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  endInput(): void {
    this.child.stdin.end();
  }

  /** Resolves once stdout (or stderr) contains `text`; fails with both streams if the process exits first. */
  async waitFor(text: string | RegExp, stream: 'stdout' | 'stderr' = 'stdout'): Promise<void> {
    const found = () => (typeof text === 'string' ? this[stream].includes(text) : text.test(this[stream]));
    while (!found()) {
      // 'close' comes after the last output, so nothing more can arrive then.
      if (this.#closed) {
        throw new Error(`skein exited before ${stream} showed ${String(text)}.\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  exit(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.#exited;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  #notify(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

/** Runs `skein <args>` to completion with `input` on stdin. */
export async function runSkein(args: readonly string[], options: CliOptions & { input?: string }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = new CliProcess(args, options);
  cli.child.stdin.end(options.input ?? '');
  const { code } = await cli.exit();
  return { code, stdout: cli.stdout, stderr: cli.stderr };
}
