import { expect } from 'chai';
import OpenAI from 'openai';
import { type EmulatorAccess, emulatorPerTest } from '../support/emulator.js';

/** For the enclosing describe: a fresh emulator per test and an openai SDK client on it (no retries, so faults show as they are). */
export function emulatorClientPerTest(): EmulatorAccess & { readonly client: OpenAI } {
  const access = emulatorPerTest();
  let client: OpenAI | undefined;
  beforeEach(() => {
    client = new OpenAI({ apiKey: 'test', baseURL: access.emulator.openaiBaseURL, maxRetries: 0 });
  });
  return {
    get emulator() {
      return access.emulator;
    },
    get url() {
      return access.url;
    },
    get client() {
      return client ?? expect.fail('emulatorClientPerTest: read the client inside a test or hook of its describe');
    },
  };
}

/** The rejection of `promise`; fails the test when it resolves. */
export async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}
