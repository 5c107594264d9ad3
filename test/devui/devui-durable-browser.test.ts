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
import { DURABLE_STOPPED_MESSAGE } from '../../src/devui/durable-chat.js';
import { launchChromium } from '../support/chromium.js';

const SCHEMA = `dbos_${RUN_ID}_devui_page`;
const STOP_SCHEMA = `dbos_${RUN_ID}_devui_page_stop`;
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
      await dropSchema(STOP_SCHEMA);
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

    it('Stop while a durable answer streams: the run is cancelled, the turn ends `stopped` with the page saying so, no thread is listed, and the next message gets the whole answer', async () => {
      const env = { DATABASE_URL, SCHEMA: STOP_SCHEMA, THREADS_DB: path.join(dir, 'stop-threads.db'), THREADS_DIR: path.join(dir, 'stop-index'), COUNT_FILE: path.join(dir, 'stop-count'), CHUNK_MS: '200', TOKEN };
      const server = await startServerProcess(SERVER, env);
      const context = await browser.newContext();
      const page = await context.newPage();
      page.setDefaultTimeout(60_000);
      const lastTurnEnded = () =>
        page.waitForFunction(() => {
          const turns = document.querySelectorAll<HTMLElement>('.turn');
          return turns.length > 0 && turns[turns.length - 1]!.dataset.state !== 'running';
        });
      try {
        await page.goto(`${server.url}/?token=${TOKEN}`);
        await page.waitForSelector('body[data-ready="true"]');
        expect(await page.locator('#agent-description').textContent()).to.include('durable: Stop cancels its run');
        await page.fill('#input', 'Read the pages');
        await page.click('#send');
        // The answer streams 3 characters per 200 ms: Stop once its first piece shows.
        await page.waitForFunction(() => Array.from(document.querySelectorAll('.message[data-role="assistant"] .text')).some((n) => (n.textContent ?? '').startsWith('don')));
        await page.click('#stop');
        await lastTurnEnded();
        expect(await page.locator('.turn').last().getAttribute('data-state')).to.equal('stopped');
        expect(await page.locator('.turn-note').allTextContents()).to.deep.equal([DURABLE_STOPPED_MESSAGE]);
        expect(await page.locator('#error').isVisible()).to.equal(false);
        const shown = (await page.locator('.message[data-role="assistant"] .text').allTextContents()).join('');
        expect(SCRIPTED_ANSWER.startsWith(shown) && shown.length < SCRIPTED_ANSWER.length, shown).to.equal(true);
        // The first turn of a new thread was stopped: no thread is listed, as for any agent.
        expect(await page.locator('#thread-list .thread').count()).to.equal(0);
        await page.fill('#input', 'Read the pages');
        await page.click('#send');
        await page.waitForFunction(() => document.querySelectorAll<HTMLElement>('.turn').length === 2);
        await lastTurnEnded();
        expect(await page.locator('.turn').last().getAttribute('data-state')).to.equal('done');
        expect(await page.locator('.message[data-role="assistant"] .text').allTextContents()).to.include(SCRIPTED_ANSWER);
        expect(await page.locator('#thread-list .thread').count()).to.equal(1);
      } finally {
        await context.close();
        server.child.kill('SIGTERM');
        await server.exit;
      }
    });
  }),
);
