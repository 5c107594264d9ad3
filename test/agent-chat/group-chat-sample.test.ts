import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

describe('samples/group-chat', () => {
  it('runs the writer/reviewer chat on the emulator, resumes it from JSON and resets it', async () => {
    const script = fileURLToPath(new URL('../../samples/group-chat.js', import.meta.url));
    const env = { ...process.env };
    delete env.OPENAI_API_KEY;
    const { stdout } = await promisify(execFile)(process.execPath, [script], { env });
    expect(stdout).to.include('using the local emulator');
    expect(stdout).to.include('writer: You said: "Write a slogan');
    expect(stdout).to.include('resuming it in a new container');
    expect(stdout).to.match(/\nreviewer: You said: /);
    expect(stdout).to.match(/assistant thread holds \d+ messages/);
    expect(stdout).to.include('Chat reset: service threads deleted.');
  });
});
