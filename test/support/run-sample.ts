import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface RunSampleOptions {
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Removed from it first. Default OPENAI_API_KEY: without a key a sample runs on the emulator. */
  unset?: readonly string[];
}

/** Runs a compiled sample (a path under samples/, e.g. `a2a.js`) in its own process, as a user would; resolves with what it printed. */
export async function runSample(sample: string, options: RunSampleOptions = {}): Promise<string> {
  const env = { ...process.env, ...options.env };
  for (const name of options.unset ?? ['OPENAI_API_KEY']) delete env[name];
  const { stdout } = await run(process.execPath, [fileURLToPath(new URL(`../../samples/${sample}`, import.meta.url))], { env });
  return stdout;
}
