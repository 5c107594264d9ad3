import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATABASE_URL, REDIS_URL, RUN_ID, dropSchema, postgresAvailable, redisAvailable, withService } from '../stores/services.js';

export { DATABASE_URL, REDIS_URL, RUN_ID, dropSchema, postgresAvailable, redisAvailable, withService };

export const NEEDS_POSTGRES = 'start PostgreSQL on 127.0.0.1:5432 (database "test") or set DATABASE_URL';
export const NEEDS_POSTGRES_AND_REDIS = `${NEEDS_POSTGRES}, and Redis on 127.0.0.1:6379 or set REDIS_URL`;

const WORKER = join(import.meta.dirname, 'fixtures', 'durable-worker.js');

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Runs the durable worker once with `env` and resolves when it exits (killed or not). */
export function runWorker(env: Record<string, string | undefined>): Promise<WorkerExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER], { env: { ...process.env, DATABASE_URL, REDIS_URL, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}

/** Lines of the tool-execution file: `start <tool> <key>`, `done <tool> <key>`, `killed <point>`. */
export function countLines(file: string, prefix: string): number {
  if (!existsSync(file)) return 0;
  return readFileSync(file, 'utf8').split('\n').filter((line) => line.startsWith(prefix)).length;
}

export function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}
