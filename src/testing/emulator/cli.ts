#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { allowedHostsFromEnv } from '../../http/allowed-hosts-env.js';
import { exitOnSignals } from '../../http/exit-on-signals.js';
import { Emulator } from './emulator.js';

export interface EmulatorCliOptions {
  port: number;
  apiKey?: string;
  /** Hosts accepted besides 127.0.0.1, localhost and [::1]; SKEIN_ALLOWED_HOSTS adds more. */
  allowedHosts?: readonly string[];
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts the emulator for a command line (this file and `skein emulator`): prints its base URL
 * on stdout and stops it, exiting, on SIGINT or SIGTERM.
 */
export async function serveEmulator(options: EmulatorCliOptions, print: (line: string) => void = console.log): Promise<Emulator> {
  const allowedHosts = [...(options.allowedHosts ?? []), ...allowedHostsFromEnv(options.env)];
  const emulator = await Emulator.start({ port: options.port, allowedHosts, ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }) });
  print(`OPENAI_BASE_URL=${emulator.openaiBaseURL}`);
  exitOnSignals(() => emulator.stop());
  return emulator;
}

/** Runs the emulator standalone: `node dist/src/testing/emulator/cli.js [--port N] [--api-key KEY] [--allowed-host HOST]...`. */
async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: { port: { type: 'string' }, 'api-key': { type: 'string' }, 'allowed-host': { type: 'string', multiple: true } },
  });
  const port = parsePort(values.port ?? process.env.PORT ?? '4010');
  const apiKey = values['api-key'];
  await serveEmulator({ port, allowedHosts: values['allowed-host'], ...(apiKey === undefined ? {} : { apiKey }) });
}

export function parsePort(text: string): number {
  const port = Number(text);
  if (text.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`The port must be an integer from 0 to 65535, got ${JSON.stringify(text)}.`);
  }
  return port;
}

/** Only when run as a program: `skein emulator` imports this file for serveEmulator. */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
