import { expect } from 'chai';
import { runSample } from '../support/run-sample.js';

describe('samples/multi-turn (what `npm start` runs)', () => {
  it('prints the whole conversation on the emulator with no key and no network', async () => {
    const stdout = await runSample('multi-turn.js');
    expect(stdout).to.contain('using the local emulator');
    expect(stdout).to.contain('Agent: Your name is Alice.');
    expect(stdout).to.contain('Agent (streaming): We talked about: "My name is Alice"; "What\'s my name?"');
    expect(stdout).to.contain("Agent: I don't know your name yet.");
  });
});
