import { expect } from 'chai';
import { SerialByKey } from 'skein';
import { rejection } from '../support/async-expectations.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('SerialByKey', () => {
  it('runs work for one key one at a time, in order; other keys run meanwhile', async () => {
    const queue = new SerialByKey();
    const log: string[] = [];
    const gate = deferred();
    const first = queue.run('a', async () => {
      log.push('a1 start');
      await gate.promise;
      log.push('a1 end');
      return 1;
    });
    const second = queue.run('a', async () => {
      log.push('a2');
      return 2;
    });
    const other = queue.run('b', async () => {
      log.push('b1');
      return 3;
    });
    expect(await other).to.equal(3);
    expect(log).to.deep.equal(['a1 start', 'b1']);
    gate.resolve();
    expect(await Promise.all([first, second])).to.deep.equal([1, 2]);
    expect(log).to.deep.equal(['a1 start', 'b1', 'a1 end', 'a2']);
  });

  it('a failure reaches its caller only; the next work for the key still runs, and idle keys are forgotten', async () => {
    const queue = new SerialByKey();
    const failed = queue.run('a', async () => {
      throw new Error('boom');
    });
    const next = queue.run('a', async () => 'ran');
    expect(((await rejection(failed)) as Error).message).to.equal('boom');
    expect(await next).to.equal('ran');
    await new Promise((r) => setImmediate(r));
    expect(queue.size).to.equal(0);
  });
});
