import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../stores/services.js';
import { NEEDS_POSTGRES, RUN_ID, dropSchema, postgresAvailable, readJson, runWorker, withService } from './dbos-support.js';

const DBOS_SCHEMA = `dbos_${RUN_ID}_queues`;

interface ModelLine {
  what: 'begin' | 'end';
  runId: string;
  worker: string;
  round: number;
}

/** The model-call log the workers wrote, in the order the calls began and ended over both processes. */
function modelLog(file: string): ModelLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [what, runId, worker, round] = line.split(' ');
      return { what: what as ModelLine['what'], runId: runId!, worker: worker!, round: Number(round) };
    });
}

withService('durable runs on DBOS: queue limits', await postgresAvailable(), NEEDS_POSTGRES, () =>
  describe('over two worker processes', function () {
    this.timeout(90_000);
    const dir = tempDir();

    after(async () => {
      await dropSchema(DBOS_SCHEMA);
      dir.remove();
    });

    it('a queue with concurrency 1 never runs two runs at once, whichever of the two workers takes them', async () => {
      // Six runs of 3 x 300 ms calls keep the queue busy for several polls of both workers, so both
      // usually take runs; which one takes each is DBOS's choice, so the test asserts only the limit.
      const runIds = [1, 2, 3, 4, 5, 6].map((n) => `serial-${n}-${RUN_ID}`);
      const log = join(dir.path, 'serial.log');
      const base = {
        DBOS_SCHEMA,
        STORE: 'memory',
        COUNT_FILE: join(dir.path, 'serial.count'),
        MODEL_LOG: log,
        MODEL_DELAY_MS: '300',
        QUEUE_NAME: 'serial',
        QUEUE_CONCURRENCY: '1',
        WORKER_CONCURRENCY: 'none',
        RUN_IDS: runIds.join(','),
      };
      const [a, b] = await Promise.all([
        runWorker({ ...base, ACTION: 'enqueue,results', WORKER: 'A', EXECUTOR_ID: 'serial-a', RESULT_FILE: join(dir.path, 'serial-a.json'), WAIT_FOR_FILE: join(dir.path, 'serial-b.ready') }),
        runWorker({ ...base, ACTION: 'results', WORKER: 'B', EXECUTOR_ID: 'serial-b', RESULT_FILE: join(dir.path, 'serial-b.json'), READY_FILE: join(dir.path, 'serial-b.ready') }),
      ]);
      expect([a.code, b.code], `${a.stderr}\n${b.stderr}`).to.deep.equal([0, 0]);
      expect(Object.keys(readJson<Record<string, string>>(join(dir.path, 'serial-b.json')))).to.deep.equal(runIds);
      const lines = modelLog(log);
      // 3 model calls per run, each begun and ended once.
      expect(lines).to.have.length(runIds.length * 6);
      // Each call ends before the next begins, and each run's calls are contiguous: no two runs overlapped.
      lines.forEach((line, i) => expect(line.what, `line ${i}`).to.equal(i % 2 === 0 ? 'begin' : 'end'));
      const order = lines.map((l) => l.runId).filter((id, i, all) => id !== all[i - 1]);
      expect(order, 'each run once, from its first call to its last').to.have.members(runIds).and.to.have.length(runIds.length);
    });

    it('a rate limit of 2 per period admits the first model calls of at most 2 runs in it, over both workers; the third waits in the queue', async () => {
      const runIds = [1, 2, 3].map((n) => `limited-${n}-${RUN_ID}`);
      const log = join(dir.path, 'limited.log');
      // A period far longer than two short runs take: the third run may start only after it.
      const base = { DBOS_SCHEMA, STORE: 'memory', COUNT_FILE: join(dir.path, 'limited.count'), MODEL_LOG: log, QUEUE_NAME: 'limited', RATE_LIMIT: '2/60', WORKER_CONCURRENCY: 'none', RUN_IDS: runIds.join(','), SETTLE_COUNT: '2' };
      const [a, b] = await Promise.all([
        runWorker({ ...base, ACTION: 'enqueue,settle', WORKER: 'A', EXECUTOR_ID: 'limited-a', RESULT_FILE: join(dir.path, 'limited-a.json') }),
        runWorker({ ...base, ACTION: 'settle', WORKER: 'B', EXECUTOR_ID: 'limited-b', RESULT_FILE: join(dir.path, 'limited-b.json') }),
      ]);
      expect([a.code, b.code], `${a.stderr}\n${b.stderr}`).to.deep.equal([0, 0]);
      const lines = modelLog(log);
      const firstCalls = lines.filter((l) => l.what === 'begin' && l.round === 0);
      expect(firstCalls, 'first model calls').to.have.length(2);
      const started = new Set(firstCalls.map((l) => l.runId));
      expect(started.size).to.equal(2);
      // The one that was not admitted made no model call and still waits, recorded, in the queue.
      const waiting = runIds.filter((id) => !started.has(id));
      expect(lines.filter((l) => l.runId === waiting[0])).to.deep.equal([]);
      const statuses = readJson<Record<string, string>>(join(dir.path, 'limited-a.json'));
      expect(runIds.map((id) => statuses[id])).to.deep.equal(runIds.map((id) => (started.has(id) ? 'SUCCESS' : 'ENQUEUED')));
    });
  }),
);
