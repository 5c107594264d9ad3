import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

describe('samples/mcp', () => {
  it('calls an MCP tool, waits for approval across serialize/resume, and answers (emulator, no network)', async () => {
    const sample = fileURLToPath(new URL('../../samples/mcp.js', import.meta.url));
    const env = { ...process.env };
    delete env.OPENAI_API_KEY;
    const { stdout } = await run(process.execPath, [sample], { env });
    expect(stdout).to.contain('Agent: echo returned: Echo: hello over MCP');
    expect(stdout).to.contain('Agent asks to run get-sum {"a":2,"b":40}');
    expect(stdout).to.contain('Agent: get-sum returned: The sum of 2 and 40 is 42.');
  });
});
