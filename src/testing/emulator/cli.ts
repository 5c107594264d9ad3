#!/usr/bin/env node
import { Emulator } from './emulator.js';

/** Runs the emulator standalone: `node dist/src/testing/emulator/cli.js [--port N] [--api-key KEY]`. */
async function main(argv: readonly string[]): Promise<void> {
  const port = parsePort(optionValue(argv, '--port') ?? process.env.PORT ?? '4010');
  const apiKey = optionValue(argv, '--api-key');
  const emulator = await Emulator.start({ port, ...(apiKey === undefined ? {} : { apiKey }) });
  console.log(`OPENAI_BASE_URL=${emulator.openaiBaseURL}`);

  const shutdown = () => {
    emulator.stop().then(
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
  const inline = argv.find((arg) => arg.startsWith(`${name}=`));
  return inline?.slice(name.length + 1);
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
