#!/usr/bin/env node
import 'reflect-metadata';
import { parsePort } from '../testing/emulator/cli.js';
import { serveDevUI } from './serve-dev-ui.js';

const USAGE = 'Usage: node dist/src/devui/main.js --config <file> [--port N] [--host 127.0.0.1] [--threads-dir DIR] [--no-emulator]';

/**
 * Runs the Dev UI from a config file. Without OPENAI_API_KEY (and without OPENAI_BASE_URL) it
 * starts the local emulator and points `${OPENAI_BASE_URL}` at it, so the samples run offline.
 */
async function main(argv: readonly string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    return;
  }
  const config = optionValue(argv, '--config');
  if (!config) throw new Error(`--config <file> is required.\n${USAGE}`);
  const port = parsePort(optionValue(argv, '--port') ?? process.env.PORT ?? '4310');
  const devui = await serveDevUI(
    { config, port, host: optionValue(argv, '--host'), threadsDir: optionValue(argv, '--threads-dir'), emulator: !argv.includes('--no-emulator') },
    (line) => console.log(line),
  );
  const shutdown = () => {
    devui.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

function optionValue(argv: readonly string[], name: string): string | undefined {
  const index = argv.indexOf(name);
  if (index >= 0) return argv[index + 1];
  return argv.find((arg) => arg.startsWith(`${name}=`))?.slice(name.length + 1);
}


main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
