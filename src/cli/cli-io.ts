/** The process streams a command talks to; a parameter so nothing reaches for globals. */
export interface CliIO {
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** The directory relative paths (config, thread files, the thread registry) start from. */
  readonly cwd: string;
}

export function processIO(): CliIO {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, cwd: process.cwd() };
}

export function writeLine(stream: NodeJS.WritableStream, line = ''): void {
  stream.write(`${line}\n`);
}

/** Prints `help` when the command was asked for it (`--help`); true when it did, and the command ends there. */
export function printedHelp(values: { help?: boolean }, io: CliIO, help: string): boolean {
  if (!values.help) return false;
  writeLine(io.stdout, help);
  return true;
}
