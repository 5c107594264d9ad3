import { expect } from 'chai';
import { runScale } from '../../bench/scale-bench.js';

// A smoke run of `npm run bench:scale` with tiny sizes: what it reports, never how fast.
describe('scale bench (npm run bench:scale, tiny sizes)', function () {
  this.timeout(180_000); // four child processes, each with a warm-up

  it('runs Skein and the SDK each in its own process per round, every reply checked, and pairs their ratios', async () => {
    const run = await runScale({ conversations: 20, turns: 2, rounds: 2, log: () => {} });
    expect(run.rounds).to.have.length(2);
    for (const round of run.rounds) {
      expect(round.map((r) => r.contender)).to.deep.equal(['openai SDK stream', 'Skein runStream']);
      for (const r of round) {
        expect(r.conversations).to.equal(20);
        expect(r.turnsPerSecond).to.be.greaterThan(0);
        expect(r.eventLoopDelayMs.max).to.be.at.least(r.eventLoopDelayMs.p99);
      }
    }
    const p99 = run.checks.find((c) => c.metric === 'event-loop delay p99 / SDK')!;
    const ratios = run.rounds.map(([sdk, skein]) => skein!.eventLoopDelayMs.p99 / sdk!.eventLoopDelayMs.p99);
    expect(p99.value).to.be.closeTo((ratios[0]! + ratios[1]!) / 2, 1e-9);
    expect(p99.target).to.equal(1.2);
    expect(run.checks.map((c) => c.metric)).to.include.members(['RSS per active run / SDK', 'RSS per idle thread / SDK']);
  });
});
