import { expect } from 'chai';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type BenchResults, runBench, writeResults } from '../../bench/run-bench.js';
import { buildMessages } from '../../bench/serialization-bench.js';

// A smoke run of the whole harness with tiny sizes: it checks what the bench reports, never how fast.
describe('bench harness (npm run bench, tiny sizes)', function () {
  this.timeout(180_000); // several child processes; more when the peers are installed (npm run bench:peers)
  let results: BenchResults;
  let dir: string;

  before(async () => {
    results = await runBench({
      turns: 4,
      runs: 1,
      warmupRuns: 0,
      serializationMessages: 200,
      serializationIterations: 1,
      conversations: 20,
      rssSamples: 1,
      longMemoryThreads: 5,
      longMemoryTurns: 3,
      processes: 2,
      peers: true,
      log: () => {},
    });
    dir = await mkdtemp(path.join(os.tmpdir(), 'skein-bench-'));
    await writeResults(results, dir);
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('measures Skein and the raw SDK side by side, every turn answered', () => {
    expect(results.turns.map((t) => t.name)).to.deep.equal(['openai SDK', 'Skein run', 'openai SDK stream', 'Skein runStream']);
    for (const t of results.turns) expect(t.perTurnWallUs).to.have.length(4);
    expect(results.turns.find((t) => t.name === 'Skein run')!.baseline).to.equal('openai SDK');
  });

  it('runs each contender in its own process, round by round, and reports the median and each round\'s ratio', () => {
    const run = results.turns.find((t) => t.name === 'Skein run')!;
    expect(run.processRatios!.cpu).to.have.length(2);
    const [a, b] = run.processRatios!.cpu;
    expect(run.cpuRatio).to.be.closeTo((a! + b!) / 2, 1e-9);
    // Growth with history is paired the same way: Skein's flatness over the SDK's, per round.
    expect(run.processRatios!.flatnessCpu).to.have.length(2);
    expect(run.flatnessCpuRatio).to.be.closeTo((run.processRatios!.flatnessCpu[0]! + run.processRatios!.flatnessCpu[1]!) / 2, 1e-9);
    expect(results.turns.find((t) => t.name === 'openai SDK')!.processRatios).to.equal(undefined);
  });

  it('keeps 20 concurrent conversations on one agent apart', () => {
    expect(results.concurrency.conversations).to.equal(20);
    expect(results.concurrency.crossTalk).to.equal(0);
    expect(results.concurrency.messagesPerThread).to.equal(4);
  });

  it('measures idle threads of the longer bench conversation too: every turn kept, input and reply', () => {
    expect(results.longMemory.threads).to.equal(5);
    expect(results.longMemory.messagesPerThread).to.equal(6);
    expect(results.longMemory.jsonBytesPerThread).to.be.greaterThan(results.concurrency.jsonBytesPerThread);
  });

  it('reports every target with a verdict, and peers or a note on why they were skipped', () => {
    const metrics = results.checks.map((c) => c.metric);
    expect(metrics).to.include.members([
      'agent.run wall / openai SDK',
      'runStream CPU / SDK stream (include_usage)',
      "agent.run CPU, turns 46-50 / 1-5, over the SDK's",
      "runStream CPU, turns 46-50 / 1-5, over the SDK's",
      'RSS import skein+skein/openai / openai',
    ]);
    for (const c of results.checks) if (c.target !== undefined) expect(c.pass).to.be.a('boolean');
    expect(results.peers!.results.length + results.peers!.notes.length).to.be.greaterThan(0);
  });

  it('writes the JSON results and an SVG chart', async () => {
    const json = JSON.parse(await readFile(path.join(dir, 'latest.json'), 'utf8')) as BenchResults;
    expect(json.checks).to.have.length(results.checks.length);
    const svg = await readFile(path.join(dir, 'latest.svg'), 'utf8');
    expect(svg.startsWith('<svg')).to.equal(true);
    expect(svg).to.contain('agent.run wall / openai SDK');
  });

  it('builds the serialization thread with exactly the asked number of messages', () => {
    for (const n of [1, 2, 3, 10, 21, 200]) expect(buildMessages(n)).to.have.length(n);
  });
});
