import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';

const cliPath = fileURLToPath(new URL('../../src/testing/emulator/cli.js', import.meta.url));

describe('Emulator CLI', () => {
  it('prints the base URL, serves it, and exits cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [cliPath, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [firstOutput] = (await once(child.stdout, 'data')) as [Buffer];
      const line = firstOutput.toString('utf8').trim();
      expect(line).to.match(/^OPENAI_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/v1$/);

      const client = new OpenAI({ apiKey: 'test', baseURL: line.split('=')[1], maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'ping' }] });
      expect(completion.choices[0].message.content).to.equal('You said: "ping" (I have seen 0 earlier messages.)');

      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      expect(code).to.equal(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
