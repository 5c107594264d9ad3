import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closedPort } from './fault-proxy.js';

/** Whether a `redis-server` binary is on the PATH. */
export function redisServerInstalled(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * A throwaway `redis-server` on a free port that requires `password`, keeps nothing on disk and
 * is stopped by `stop()`. Resolves once it accepts connections.
 */
export async function startPrivateRedis(password: string): Promise<{ port: number; url: (pw: string) => string; stop(): Promise<void> }> {
  const port = await closedPort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--requirepass', password, '--save', '', '--appendonly', 'no', '--protected-mode', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
  });
  return {
    port,
    url: (pw) => `redis://:${encodeURIComponent(pw)}@127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
