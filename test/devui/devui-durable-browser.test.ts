import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { DATABASE_URL, NEEDS_POSTGRES, RUN_ID, dropSchema, postgresAvailable, withService } from '../dbos/dbos-support.js';
import { SCRIPTED_ANSWER, timesDone } from '../dbos/fixtures/server-process.js';
import { startServerProcess } from '../support/server-process.js';
import { launchChromium } from '../support/chromium.js';

const SCHEMA = `dbos_${RUN_ID}_devui_page`;
const SERVER = path.join(import.meta.dirname, 'fixtures', 'durable-devui.js');
const TOKEN = 'durable-devui-page-token';

/** A port nothing listens on now: the Dev UI that replaces a killed one listens there too, as a restarted server would. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

withService('Dev UI page: a durable run survives its server (DBOS on PostgreSQL, headless Chromium)', await postgresAvailable(), NEEDS_POSTGRES, () =>
  describe('the Dev UI page with a durable agent', function () {
    this.timeout(120_000);
    let browser: Browser;
    let dir: string;

    before(async function () {
      browser = await launchChromium(this);
      dir = await mkdtemp(path.join(os.tmpdir(), 'skein-devui-page-'));
    });
    after(async () => {
      await browser?.close();
      await dropSchema(SCHEMA);
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('the server is SIGKILLed while the answer streams: the page reads the rest from the restarted server, shows the answer once, and the thread keeps the turn', async () => {
      const countFile = path.join(dir, 'count');
      const port = String(await freePort());
      const env = { DATABASE_URL, SCHEMA, PORT: port, THREADS_DB: path.join(dir, 'threads.db'), THREADS_DIR: path.join(dir, 'index'), COUNT_FILE: countFile, CHUNK_MS: '60', TOKEN };
      // The answer (third model call) streams 3 characters per 60 ms; the process dies before its piece 8.
      const first = await startServerProcess(SERVER, { ...env, KILL_AT: '3:8' });
      const context = await browser.newContext();
      const page = await context.newPage();
      page.setDefaultTimeout(60_000);
      let second: Awaited<ReturnType<typeof startServerProcess>> | undefined;
      try {
        await page.goto(`${first.url}/?token=${TOKEN}`);
        await page.waitForSelector('body[data-ready="true"]');
        await page.fill('#input', 'Read the pages');
        await page.click('#send');
        expect(await first.exit).to.equal('SIGKILL');
        // The page saw part of the answer before its server died.
        const partial = (await page.locator('.message[data-role="assistant"] .text').allTextContents()).join('');
        expect(partial.length).to.be.greaterThan(0);
        expect(SCRIPTED_ANSWER.startsWith(partial) && partial.length < SCRIPTED_ANSWER.length, partial).to.equal(true);
        second = await startServerProcess(SERVER, env);
        await page.waitForFunction(() => {
          const turns = document.querySelectorAll<HTMLElement>('.turn');
          return turns.length > 0 && turns[turns.length - 1]!.dataset.state !== 'running';
        });
        expect(await page.locator('.turn').last().getAttribute('data-state')).to.equal('done');
        // What the page shows: the answer once (the cut attempt was taken back), no error.
        expect((await page.locator('.message[data-role="assistant"] .text').allTextContents()).join('')).to.equal(SCRIPTED_ANSWER);
        expect(await page.locator('#error').isVisible()).to.equal(false);
        expect([timesDone(countFile, 'fetch_page'), timesDone(countFile, 'summarize')]).to.deep.equal([1, 1]);
        // A reload reads the thread from the server: the turn is there once.
        await page.reload();
        await page.waitForSelector('body[data-ready="true"]');
        await page.locator('#thread-list .thread').first().locator('button.open').click();
        await page.waitForFunction((answer) => Array.from(document.querySelectorAll('.message[data-role="assistant"] .text')).some((n) => n.textContent === answer), SCRIPTED_ANSWER);
        const texts = await page.locator('.message[data-role="assistant"] .text').allTextContents();
        expect(texts.filter((t) => t === SCRIPTED_ANSWER)).to.have.length(1);
        expect(await page.locator('.message[data-role="user"] .text').allTextContents()).to.deep.equal(['Read the pages']);
      } finally {
        await context.close();
        if (second) {
          second.child.kill('SIGTERM');
          await second.exit;
        }
        if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
      }
    });
  }),
);
