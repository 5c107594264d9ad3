import { expect } from 'chai';
import OpenAI from 'openai';
import { Emulator } from 'skein/testing';

/** A fresh emulator and an openai SDK client on it (no retries, so faults show as they are). */
export async function emulatorWithClient(): Promise<{ emulator: Emulator; client: OpenAI }> {
  const emulator = await Emulator.start();
  return { emulator, client: new OpenAI({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 }) };
}

/** The rejection of `promise`; fails the test when it resolves. */
export async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}
