import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigurationError } from 'skein';

/** Writes a config file into `dir` and returns its path. */
export async function writeConfig(dir: string, name: string, text: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, text);
  return file;
}

/** The problems of the ConfigurationError `promise` rejects with (failing when it resolves or rejects otherwise). */
export async function problemsOf(promise: Promise<unknown>): Promise<readonly string[]> {
  const error = await promise.then(() => expect.fail('expected ConfigurationError'), (e: unknown) => e);
  expect(error).to.be.instanceOf(ConfigurationError);
  return (error as ConfigurationError).problems;
}
