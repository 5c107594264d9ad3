import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

describe('samples/multi-turn (what `npm start` runs)', () => {
  it('prints the whole conversation on the emulator with no key and no network', async () => {
    const sample = fileURLToPath(new URL('../../samples/multi-turn.js', import.meta.url));
    const env = { ...process.env };
    delete env.OPENAI_API_KEY;
    const { stdout } = await run(process.execPath, [sample], { env });
    expect(stdout).to.contain('using the local emulator');
    expect(stdout).to.contain('Agent: Your name is Alice.');
    expect(stdout).to.contain('Agent (streaming): We talked about: "My name is Alice"; "What\'s my name?"');
    expect(stdout).to.contain("Agent: I don't know your name yet.");
  });
});
