import { createRequire } from 'node:module';
import { ConfigurationError, SkeinError } from '../errors/skein-error.js';
import { ExitCode, UsageError } from './cli-error.js';
import type { CliCommand } from './cli-command.js';
import { writeLine, type CliIO } from './cli-io.js';
import { chatCommand } from './commands/chat-command.js';
import { devuiCommand } from './commands/devui-command.js';
import { emulatorCommand } from './commands/emulator-command.js';
import { mcpCommand } from './commands/mcp-command.js';
import { agUiCommand } from './commands/ag-ui-command.js';
import { threadsCommand } from './commands/threads-command.js';

export const COMMANDS: readonly CliCommand[] = [chatCommand, threadsCommand, emulatorCommand, devuiCommand, mcpCommand, agUiCommand];

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `Usage: skein <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Options:
  -h, --help     show this help ("skein <command> --help" for a command's)
  -v, --version  print the version

Exit codes: 0 ok, 1 configuration/thread/service failure, 2 bad command line, 130 Ctrl-C.`;
}

/** Runs `skein <argv>`; resolves with the exit code. Every error ends here as a message and a code. */
export async function runCli(argv: readonly string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv;
  let command: CliCommand | undefined;
  try {
    if (name === undefined) {
      writeLine(io.stderr, mainHelp());
      return ExitCode.usage;
    }
    if (name === '--help' || name === '-h') {
      writeLine(io.stdout, mainHelp());
      return ExitCode.ok;
    }
    if (name === '--version' || name === '-v') {
      writeLine(io.stdout, packageVersion());
      return ExitCode.ok;
    }
    if (name === 'help') {
      const target = rest[0] === undefined ? undefined : findCommand(rest[0]);
      writeLine(io.stdout, target ? target.help : mainHelp());
      return ExitCode.ok;
    }
    command = findCommand(name);
    return await command.run([...rest], io);
  } catch (error) {
    return report(error, command, io);
  }
}

function findCommand(name: string): CliCommand {
  const found = COMMANDS.find((c) => c.name === name);
  if (found) return found;
  const what = name.startsWith('-') ? `unknown option ${name}` : `unknown command "${name}"`;
  throw new UsageError(`${what}; commands: ${COMMANDS.map((c) => c.name).join(', ')}`);
}

function report(error: unknown, command: CliCommand | undefined, io: CliIO): number {
  const prefix = command ? `skein ${command.name}` : 'skein';
  if (error instanceof UsageError) {
    writeLine(io.stderr, `${prefix}: ${error.message}`);
    const target = error.command ?? command?.name;
    writeLine(io.stderr, `Run "skein${target ? ` ${target}` : ''} --help" for usage.`);
    return ExitCode.usage;
  }
  if (error instanceof ConfigurationError) {
    const count = error.problems.length;
    writeLine(io.stderr, `${prefix}: invalid configuration (${count} problem${count === 1 ? '' : 's'}):`);
    for (const problem of error.problems) writeLine(io.stderr, `  - ${problem}`);
    return ExitCode.failure;
  }
  if (error instanceof SkeinError) {
    writeLine(io.stderr, `${prefix}: ${error.name}: ${error.message}`);
    return ExitCode.failure;
  }
  if (isSystemError(error)) {
    // The machine said no (a busy port, a missing or unreadable file): its message is the news, not a stack.
    writeLine(io.stderr, `${prefix}: ${error.message}`);
    return ExitCode.failure;
  }
  writeLine(io.stderr, `${prefix}: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return ExitCode.failure;
}

/** A Node system error (`EADDRINUSE`, `ENOENT`, `EACCES`, ...): it carries an error code and the failed system call. */
function isSystemError(error: unknown): error is NodeJS.ErrnoException {
  const { code, syscall } = (error ?? {}) as { code?: unknown; syscall?: unknown };
  return error instanceof Error && typeof code === 'string' && /^E[A-Z]+$/.test(code) && typeof syscall === 'string';
}

function packageVersion(): string {
  try {
    // dist/src/cli/skein-cli.js -> package.json at the package root.
    const pkg = createRequire(import.meta.url)('../../../package.json') as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
