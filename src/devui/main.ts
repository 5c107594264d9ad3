#!/usr/bin/env node
import 'reflect-metadata';
import { Emulator } from '../testing/emulator/emulator.js';
import { startDevUI } from './devui-server.js';

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
  const env = { ...process.env };
  let emulator: Emulator | undefined;
  if (!env.OPENAI_API_KEY && !env.OPENAI_BASE_URL && !argv.includes('--no-emulator')) {
    emulator = await Emulator.start();
    env.OPENAI_BASE_URL = emulator.openaiBaseURL;
    console.log(`No OPENAI_API_KEY: using the local emulator at ${emulator.openaiBaseURL}`);
  }
  const devui = await startDevUI({
    config,
    port,
    host: optionValue(argv, '--host'),
    threadsDir: optionValue(argv, '--threads-dir'),
    env,
  });
  console.log(`Skein Dev UI: ${devui.url}  (threads in ${devui.threads.directory})`);

  const shutdown = () => {
    Promise.all([devui.close(), emulator?.stop()]).then(
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

function parsePort(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`The port must be an integer from 0 to 65535, got ${JSON.stringify(text)}.`);
  }
  return port;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
