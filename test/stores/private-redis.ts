import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closedPort } from './fault-proxy.js';
import { tempDir } from './services.js';

/** Whether a `redis-server` binary is on the PATH. */
export function redisServerInstalled(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Persistence without disk (the default) or an append-only file synced at every write. */
export type PrivateRedisPersistence = 'none' | 'aof-always';

const PERSISTENCE_ARGS: Readonly<Record<PrivateRedisPersistence, string[]>> = {
  none: ['--save', '', '--appendonly', 'no'],
  'aof-always': ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always'],
};

/**
 * A throwaway `redis-server` on a free port that requires `password`, with the given persistence
 * (its files in a temporary folder removed by `stop()`). Resolves once it accepts connections.
 */
export async function startPrivateRedis(
  password: string,
  persistence: PrivateRedisPersistence = 'none',
): Promise<{ port: number; url: (pw: string, user?: string) => string; stop(): Promise<void> }> {
  const port = await closedPort();
  const dir = tempDir();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--requirepass', password, '--dir', dir.path, ...PERSISTENCE_ARGS[persistence], '--protected-mode', 'no'],
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
    url: (pw, user = '') => `redis://${encodeURIComponent(user)}:${encodeURIComponent(pw)}@127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          dir.remove();
          resolve();
        };
        if (child.exitCode !== null) return done();
        child.once('exit', done);
        child.kill('SIGTERM');
      }),
  };
}
