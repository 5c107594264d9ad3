import { Emulator, type EmulatorOptions } from 'skein/testing';

/** The running emulator of the enclosing describe; valid inside its tests and hooks. */
export interface EmulatorAccess {
  readonly emulator: Emulator;
  /** The emulator's base URL (`emulator.url`). */
  readonly url: string;
}

/**
 * For the enclosing describe: one emulator started before its first test and stopped after its
 * last (the lifecycle most suites want; per-test emulators keep their own hooks).
 */
export function useEmulator(options: EmulatorOptions = {}): EmulatorAccess {
  let current: Emulator | undefined;
  before(async () => {
    current = await Emulator.start(options);
  });
  after(async () => {
    await current?.stop();
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
  throw new Error('useEmulator: the emulator is not running; read it inside a test or hook of the describe that called useEmulator()');
}
