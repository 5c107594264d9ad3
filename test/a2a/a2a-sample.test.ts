import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

describe('samples/a2a', () => {
  it('serves an agent with bearer auth, talks to it, resumes the thread, and answers an approval', async () => {
    const sample = fileURLToPath(new URL('../../samples/a2a.js', import.meta.url));
    const env = { ...process.env };
    delete env.OPENAI_API_KEY;
    const { stdout } = await run(process.execPath, [sample], { env });
    expect(stdout).to.contain('< Nice to meet you, Ada!');
    expect(stdout).to.contain('< Your name is Ada.');
    expect(stdout).to.contain('< Approval needed before running: (input required)');
    expect(stdout).to.contain('< delete_file returned: deleted /tmp/demo.txt');
  });
});
