import { expect } from 'chai';
import { runSample } from '../support/run-sample.js';

describe('samples/config/run-config (a YAML config wiring two agents)', () => {
  it('loads the config against the emulator and holds a conversation with both agents, across a resume', async () => {
    const stdout = await runSample('config/run-config.js', { unset: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL'] });
    expect(stdout).to.contain('using the local emulator');
    expect(stdout).to.match(/Loaded .*samples[/\\]config[/\\]skein\.yaml/);
    const [, assistant, researcher] = stdout.split(/== \w+ ==/);
    expect(assistant).to.contain('(serialized the message-store thread');
    expect(assistant).to.contain('assistant: Your name is Alice.');
    expect(researcher).to.match(/\(serialized the service thread conv_\w+/);
    expect(researcher).to.contain('researcher: Your name is Alice.');
    // The config's telemetry plugin traced both agents, each model call under its run.
    expect(stdout.match(/^ {2}invoke_agent assistant$/gm)).to.have.length(2);
    expect(stdout.match(/^ {2}invoke_agent researcher$/gm)).to.have.length(2);
    expect(stdout.match(/^ {2}chat gpt-4\.1-mini$/gm)).to.have.length(4);
  });
});
