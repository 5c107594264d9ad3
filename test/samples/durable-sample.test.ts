import { expect } from 'chai';
import { DATABASE_URL, RUN_ID, dropSchema, postgresAvailable, withService } from '../stores/services.js';
import { runSample } from '../support/run-sample.js';

withService('samples/durable', await postgresAvailable(), 'start PostgreSQL on 127.0.0.1:5432 (database "test") or set DATABASE_URL', () => {
  const schema = `sample_dbos_${RUN_ID}`;
  after(() => dropSchema(schema));

  it('kills a long tool loop and resumes it without re-reading finished pages, and approves a waiting run from another process', async function () {
    this.timeout(120_000);
    const stdout = await runSample('durable/durable.js', { env: { DATABASE_URL, SAMPLE_SCHEMA: schema }, unset: [] });
    const lines = stdout.split('\n');
    const read = (who: string) => lines.filter((l) => l.startsWith(`  [${who}] reading page`)).map((l) => Number(/page (\d+)/.exec(l)![1]));
    expect(read('crash')).to.deep.equal([1, 2, 3]);
    expect(lines).to.include('  [crash] SIGKILL while reading page 3');
    // Page 3 was killed before its result was recorded, so it is read again; 1 and 2 are not.
    expect(read('resume')).to.deep.equal([3, 4, 5]);
    expect(lines).to.include('  [resume] result: Read 5 pages.');
    expect(lines).to.include('  [ask] waiting for approval; this process exits now');
    expect(lines.filter((l) => l.endsWith('deploying'))).to.deep.equal(['  [approve] deploying']);
    expect(lines).to.include('  [approve] result: Deployed.');
  });
});
