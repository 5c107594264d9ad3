import { SkeinError } from '../errors/skein-error.js';

/** Exit codes of the `skein` command. */
export const ExitCode = {
  ok: 0,
  /** Configuration, thread file or service failure. */
  failure: 1,
  /** Unknown command or flag, missing argument. */
  usage: 2,
  /** Ctrl-C at the chat prompt (128 + SIGINT, as shells report it). */
  interrupted: 130,
} as const;

/** The command line itself is wrong; the message says how to fix it. Exits with code 2. */
export class UsageError extends SkeinError {
  constructor(
    message: string,
    /** The command whose `--help` to point at, e.g. `chat` or `threads`. */
    readonly command?: string,
  ) {
    super(message);
  }
}
