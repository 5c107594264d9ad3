import { expect } from 'chai';
import { runSample } from '../support/run-sample.js';

describe('samples/a2a', () => {
  it('serves an agent with bearer auth, talks to it, resumes the thread, and answers an approval', async () => {
    const stdout = await runSample('a2a.js');
    expect(stdout).to.contain('< Nice to meet you, Ada!');
    expect(stdout).to.contain('< Your name is Ada.');
    expect(stdout).to.contain('< Approval needed before running: (input required)');
    expect(stdout).to.contain('< delete_file returned: deleted /tmp/demo.txt');
  });
});
