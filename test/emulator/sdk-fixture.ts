import { expect } from 'chai';
import OpenAI from 'openai';
import { Emulator } from '../../src/testing/emulator/index.js';

/** The error a call failed with; fails the test when the call succeeds. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected the call to fail'),
    (error: unknown) => error,
  );
}

/** A fresh emulator and an openai client on it for each test (no retries, quiet logs), stopped after. */
export function emulatorPerTest(): { readonly emulator: Emulator; readonly client: OpenAI } {
  const current: { emulator?: Emulator; client?: OpenAI } = {};
  beforeEach(async () => {
    current.emulator = await Emulator.start();
    current.client = new OpenAI({ apiKey: 'test', baseURL: current.emulator.openaiBaseURL, maxRetries: 0, logLevel: 'off' });
  });
  afterEach(async () => {
    await current.emulator?.stop();
  });
  return {
    get emulator() {
      return current.emulator!;
    },
    get client() {
      return current.client!;
    },
  };
}
