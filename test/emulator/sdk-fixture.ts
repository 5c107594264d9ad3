import { expect } from 'chai';
import type OpenAI from 'openai';
import type { Emulator } from 'skein/testing';
import { emulatorClientPerTest } from '../support/emulator.js';

/** The error a call failed with; fails the test when the call succeeds. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected the call to fail'),
    (error: unknown) => error,
  );
}

/** A fresh emulator (test/support's emulatorPerTest) and an openai client on it for each test (no retries, quiet logs). */
export function emulatorPerTest(): { readonly emulator: Emulator; readonly client: OpenAI } {
  return emulatorClientPerTest({ logLevel: 'off' });
}
