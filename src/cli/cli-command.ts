import type { CliIO } from './cli-io.js';

/** One `skein <name>` command. */
export interface CliCommand {
  readonly name: string;
  /** One line for `skein --help`. */
  readonly summary: string;
  /** The full `skein <name> --help` text. */
  readonly help: string;
  /** Runs with the arguments after the command name; resolves with the exit code. */
  run(args: string[], io: CliIO): Promise<number>;
}
