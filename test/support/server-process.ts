// One way to start a test server in a child process, for every folder whose tests kill or
// scale out servers (A2A instances, the durable AG-UI and Dev UI servers).
import { type ChildProcess, spawn } from 'node:child_process';

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** The signal that ended the process (null when it exited by itself). */
  exit: Promise<NodeJS.Signals | null>;
  /** What the process wrote to stderr so far (its logger's errors). */
  log: () => string;
}

/**
 * Starts `script` (which prints `listening <url>` once it listens) with `env` on top of this
 * process's; resolves once it listens. `children` gets the child at once, so the caller's
 * cleanup kills it even when it never listens.
 */
export function startServerProcess(script: string, env: Record<string, string>, children?: ChildProcess[]): Promise<ServerProcess> {
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children?.push(child);
  const exit = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  let out = '';
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening (\S+)\n/.exec(out)?.[1];
      if (url) resolve({ url, child, exit, log: () => err });
    });
    void exit.then((signal) => reject(new Error(`The server process ${script} exited (signal ${signal}) before listening: ${err}`)));
  });
}
