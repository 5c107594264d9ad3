import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './cli-error.js';

type ParseResult<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/**
 * `node:util` parseArgs in strict mode, with its errors turned into a UsageError that names the
 * command, so every unknown flag or missing value exits with code 2 and a pointer to `--help`.
 */
export function parseCommandArgs<T extends ParseArgsConfig>(command: string, config: T): ParseResult<T> {
  try {
    return parseArgs<T>({ strict: true, ...config });
  } catch (error) {
    throw new UsageError(usageMessage(error), command);
  }
}

function usageMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  const option = /'(-[^' ]+)/.exec(message)?.[1];
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${option ?? message}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return option ? `option ${option} ${/argument missing/.test(message) ? 'needs a value' : 'takes no value'}` : message;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${/'([^']*)'/.exec(message)?.[1] ?? message}`;
    default:
      return message;
  }
}

/** A required string option, or a UsageError naming it. */
export function requireOption(command: string, name: string, value: string | undefined): string {
  if (value === undefined || value === '') throw new UsageError(`missing --${name} <value>`, command);
  return value;
}
