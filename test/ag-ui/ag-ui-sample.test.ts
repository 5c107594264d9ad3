import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpAgent, lastText, say, tempDir } from './ag-ui-fixture.js';

const SAMPLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../samples/ag-ui/ag-ui-sample.js');

describe('samples/ag-ui: the one command (node dist/samples/ag-ui/ag-ui-sample.js)', () => {
  it('starts on the emulator, prints its address, serves the page and the agent', async () => {
    const dir = await tempDir();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0' };
    delete env.OPENAI_API_KEY;
    const child = spawn(process.execPath, [SAMPLE], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const found = /Open (http:\/\/127\.0\.0\.1:\d+)\//.exec(out)?.[1];
          if (found) resolve(found);
        });
        child.once('exit', (code) => reject(new Error(`the sample exited with ${code}`)));
      });
      const page = await fetch(`${url}/`);
      expect(await page.text()).to.contain('<script type="module" src="/app.js"></script>');
      const app = await (await fetch(`${url}/app.js`)).text();
      expect(app).to.match(/from '\/modules\/node_modules\/@ag-ui\/client\/dist\/index\.mjs'/);
      const agent = new HttpAgent({ url: `${url}/agents/helper` });
      await say(agent, 'What is the weather in Paris?');
      expect(lastText(agent)).to.equal('get_weather returned: Sunny, 21°C in Paris');
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
