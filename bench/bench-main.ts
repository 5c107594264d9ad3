import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Whether the module at `moduleUrl` is the script node was started with (not one it imported). */
export function isEntryPoint(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && process.argv[1] !== '' && moduleUrl === pathToFileURL(path.resolve(process.argv[1])).href;
}

/** Runs a bench's `main` and ends the process: 0 when it finishes, 1 with the error printed when it throws (open handles would keep it alive). */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
