import { expect } from 'chai';
import OpenAI from 'openai';
import type { Emulator } from 'skein/testing';
import { emulatorPerTest as freshEmulatorPerTest } from '../support/emulator.js';

/** The error a call failed with; fails the test when the call succeeds. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected the call to fail'),
    (error: unknown) => error,
  );
}

/** A fresh emulator (test/support's emulatorPerTest) and an openai client on it for each test (no retries, quiet logs). */
export function emulatorPerTest(): { readonly emulator: Emulator; readonly client: OpenAI } {
  const running = freshEmulatorPerTest();
  let client: OpenAI | undefined;
  beforeEach(() => {
    client = new OpenAI({ apiKey: 'test', baseURL: running.emulator.openaiBaseURL, maxRetries: 0, logLevel: 'off' });
  });
  return {
    get emulator() {
      return running.emulator;
    },
    get client() {
      return client!;
    },
  };
}
