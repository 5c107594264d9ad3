import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { type AgUiSample, startAgUiSample } from '../../samples/ag-ui/ag-ui-sample.js';
import { launchChromium } from '../support/chromium.js';
import { tempDir } from './ag-ui-fixture.js';

describe('skein/ag-ui in headless Chromium: the sample page on @ag-ui/client', function () {
  // Launching a browser takes a few seconds on a cold machine; no assertion depends on time.
  this.timeout(60_000);
  let browser: Browser;
  let sample: AgUiSample;
  let dir: string;
  let page: Page;

  before(async function () {
    browser = await launchChromium(this);
    dir = await tempDir();
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY; // the sample runs on the emulator here
    sample = await startAgUiSample({ dataDir: dir });
    if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(20_000);
  });
  after(async () => {
    await browser?.close();
    await sample?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Waits until the page finished one more run than `runs`. */
  async function settled(runs: number): Promise<void> {
    await page.waitForFunction((n) => Number(document.body.dataset.runs) > n && document.body.dataset.busy === 'false', runs);
  }
  async function runs(): Promise<number> {
    return Number(await page.getAttribute('body', 'data-runs'));
  }
  async function send(text: string): Promise<void> {
    const before = await runs();
    await page.fill('#input', text);
    await page.click('#send');
    await settled(before);
  }
  async function reload(): Promise<void> {
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
  }
  const texts = (role: string) => page.locator(`.message[data-role="${role}"]`).allTextContents();

  it('chats, runs a frontend tool in the page, approves a tool after a reload mid-conversation, and keeps the thread', async () => {
    await page.goto(`${sample.url}/`);
    await page.waitForSelector('body[data-ready="true"]');
    await send('My name is Ada.');
    expect(await texts('assistant')).to.deep.equal(['Nice to meet you, Ada!']);

    await send('call change_background {"color":"lightyellow"}');
    expect(await page.evaluate(() => document.body.style.background)).to.equal('lightyellow');
    expect((await texts('assistant')).at(-1)).to.equal('change_background returned: background is lightyellow');

    await send('call delete_file {"path":"/tmp/z.txt"}');
    expect(await page.locator('#approvals .approval').count()).to.equal(1);
    expect(sample.deleted).to.deep.equal([]);
    // Reload while the approval waits: the page connects again and gets the thread and the interrupt.
    await reload();
    expect((await texts('user'))[0]).to.equal('My name is Ada.');
    expect(await page.locator('#approvals .approval').count()).to.equal(1);
    const before = await runs();
    await page.click('#approvals button[data-approve="true"]');
    await settled(before);
    expect(sample.deleted).to.deep.equal(['/tmp/z.txt']);
    expect((await texts('assistant')).at(-1)).to.equal('delete_file returned: deleted /tmp/z.txt');
    expect(await page.locator('#approvals .approval').count()).to.equal(0);

    await reload();
    await send('What is my name?');
    expect((await texts('assistant')).at(-1)).to.equal('Your name is Ada.');
    expect(sample.deleted).to.deep.equal(['/tmp/z.txt']);
    expect(await page.locator('#error').textContent()).to.equal('');
  });
});
