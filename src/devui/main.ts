#!/usr/bin/env node
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { parsePort } from '../testing/emulator/cli.js';
import { DEVUI_ARGS, serveDevUIUntilStopped } from './serve-dev-ui.js';

const USAGE =
  'Usage: node dist/src/devui/main.js --config <file> [--port N] [--host 127.0.0.1 [--expose]] [--allowed-host HOST]... [--no-token] [--threads-dir DIR] [--no-emulator] [--capture-content]';

/**
 * Runs the Dev UI from a config file. Without OPENAI_API_KEY (and without OPENAI_BASE_URL) it
 * starts the local emulator and points `${OPENAI_BASE_URL}` at it, so the samples run offline.
 */
async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, strict: true, options: DEVUI_ARGS });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (!values.config) throw new Error(`--config <file> is required.\n${USAGE}`);
  const port = parsePort(values.port ?? process.env.PORT ?? '4310');
  await serveDevUIUntilStopped({ ...values, config: values.config }, port, console.log, console.warn);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
