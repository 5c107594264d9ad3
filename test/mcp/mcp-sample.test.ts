import { expect } from 'chai';
import { runSample } from '../support/run-sample.js';

describe('samples/mcp', () => {
  it('calls an MCP tool, waits for approval across serialize/resume, and answers (emulator, no network)', async () => {
    const stdout = await runSample('mcp.js');
    expect(stdout).to.contain('Agent: echo returned: Echo: hello over MCP');
    expect(stdout).to.contain('Agent asks to run get-sum {"a":2,"b":40}');
    expect(stdout).to.contain('Agent: get-sum returned: The sum of 2 and 40 is 42.');
  });
});
