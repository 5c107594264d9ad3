import { expect } from 'chai';
import { runSample } from '../support/run-sample.js';

describe('samples/group-chat', () => {
  it('runs the writer/reviewer chat on the emulator, resumes it from JSON and resets it', async () => {
    const stdout = await runSample('group-chat.js');
    expect(stdout).to.include('using the local emulator');
    expect(stdout).to.include('writer: You said: "Write a slogan');
    expect(stdout).to.include('resuming it in a new container');
    expect(stdout).to.match(/\nreviewer: You said: /);
    expect(stdout).to.match(/assistant thread holds \d+ messages/);
    expect(stdout).to.include('Chat reset: service threads deleted.');
  });
});
