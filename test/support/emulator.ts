import OpenAI, { type ClientOptions } from 'openai';
import { Emulator, type EmulatorOptions } from 'skein/testing';

/** The running emulator of the enclosing describe; valid inside its tests and hooks. */
export interface EmulatorAccess {
  readonly emulator: Emulator;
  /** The emulator's base URL (`emulator.url`). */
  readonly url: string;
}

/**
 * For the enclosing describe: one emulator started before its first test and stopped after its
 * last (the lifecycle most suites want).
 */
export function useEmulator(options: EmulatorOptions = {}, teardown: EmulatorTeardown = {}): EmulatorAccess {
  return emulatorAround(before, after, options, teardown);
}

/** For the enclosing describe: a fresh emulator for each test, stopped after it (no state leaks between tests). */
export function emulatorPerTest(options: EmulatorOptions = {}, teardown: EmulatorTeardown = {}): EmulatorAccess {
  return emulatorAround(beforeEach, afterEach, options, teardown);
}

/** For the enclosing describe: `emulatorPerTest` and an openai SDK client on it, made before each test (no retries, so faults show as they are). */
export function emulatorClientPerTest(clientOptions: ClientOptions = {}, options: EmulatorOptions = {}): EmulatorAccess & { readonly client: OpenAI } {
  const access = emulatorPerTest(options);
  let client: OpenAI | undefined;
  beforeEach(() => {
    client = new OpenAI({ apiKey: 'test', baseURL: access.emulator.openaiBaseURL, maxRetries: 0, ...clientOptions });
  });
  return {
    get emulator() {
      return access.emulator;
    },
    get url() {
      return access.url;
    },
    get client() {
      return client ?? notStarted();
    },
  };
}

/** What a suite closes before its emulator stops. */
export interface EmulatorTeardown {
  /** Runs in the stop hook before the emulator stops: close what talks to it (containers, a harness, a server) first, so nothing calls a stopped emulator. */
  beforeStop?: () => unknown;
}

/** Starts an emulator in the `start` hook and stops it in the `stop` hook. */
function emulatorAround(start: Mocha.HookFunction, stop: Mocha.HookFunction, options: EmulatorOptions, teardown: EmulatorTeardown): EmulatorAccess {
  let current: Emulator | undefined;
  start(async () => {
    current = await Emulator.start(options);
  });
  stop(async () => {
    try {
      await teardown.beforeStop?.();
    } finally {
      await current?.stop();
    }
  });
  const running = (): Emulator => current ?? notStarted();
  return {
    get emulator() {
      return running();
    },
    get url() {
      return running().url;
    },
  };
}

/** Reached only when a suite reads the emulator outside its tests and hooks (e.g. at describe time). */
function notStarted(): never {
  throw new Error('useEmulator: the emulator is not running; read it inside a test or hook of the describe that called useEmulator() or emulatorPerTest()');
}
