import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { EverythingHttp, marks } from '../mcp/mcp-fixtures.js';
import { startFixture, type DevUIFixture } from './devui-fixture.js';
import { writeMcpConfig } from './devui-mcp-config.js';
import { devuiSend, devuiTurn, launchChromium } from '../support/chromium.js';


/** Issue 18: what a user sees of MCP tools on the Dev UI page (headless Chromium). */
describe('Dev UI in headless Chromium: MCP tools', function () {
  this.timeout(60_000);
  let browser: Browser;
  let fx: DevUIFixture;
  let context: BrowserContext;
  let page: Page;
  let dir: string;
  let markFile: string;
  let hostedServer: EverythingHttp;

  before(async function () {
    browser = await launchChromium(this);
    hostedServer = await EverythingHttp.start();
  });
  after(async () => {
    await browser?.close();
    await hostedServer?.stop();
  });
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'skein-devui-mcp-page-'));
    markFile = path.join(dir, 'marks');
    fx = await startFixture({ config: await writeMcpConfig(dir, markFile, hostedServer.url) });
    context = await browser.newContext();
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(fx.devui.pageUrl);
    await page.waitForSelector('body[data-ready="true"]');
  });
  afterEach(async () => {
    await context?.close();
    await fx?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const pidCalls = async () => (await marks(markFile)).filter((m) => m === 'call pid').length;

  const turn = (start: () => Promise<void>) => devuiTurn(page, start);
  const send = (text: string) => devuiSend(page, text);
  const assistantTexts = () => page.locator('.message[data-role="assistant"] .text').allTextContents();
  /** The facts line of the turn's execute_tool span, from the last trace. */
  async function toolSpanFacts(): Promise<string | null> {
    const trace = page.locator('details.trace').last();
    await trace.locator('summary').click();
    return trace.locator('.span-row[data-operation="execute_tool"] .span-facts').textContent();
  }

  it('lists MCP tools with their server and runs one by hand from its form', async () => {
    await page.waitForSelector('#tool-list button');
    expect(await page.locator('#tool-list button').allTextContents()).to.deep.equal([
      'get_weather',
      'echo · MCP server "everything"',
      'get-sum · MCP server "everything"',
      'get-tiny-image · MCP server "everything"',
      'c_pid · MCP server "counter" (tool "pid" there)',
    ]);
    await page.getByRole('button', { name: 'Run tool echo from MCP server "everything" by hand' }).click();
    const dialog = page.locator('#tool-dialog');
    expect(await dialog.locator('#tool-source').textContent()).to.equal('Runs on MCP server "everything".');
    await dialog.getByLabel('message (required)').fill('from the page');
    await dialog.getByRole('button', { name: 'Run tool' }).click();
    await page.waitForSelector('#tool-output[data-outcome="ok"]');
    expect(await page.textContent('#tool-output')).to.match(/^Result: Echo: from the page\n\(\d+ ms\)$/);
    expect(fx.emulator.requests).to.deep.equal([]);
    await dialog.getByRole('button', { name: 'Close' }).click();

    // A local tool's form says nothing about a server.
    await page.getByRole('button', { name: 'Run tool get_weather by hand' }).click();
    expect(await dialog.locator('#tool-source').isVisible()).to.equal(false);
  });

  it('shows an MCP call and its result inline like a local one; the trace names the server', async () => {
    await send('call echo {"message":"hi"}');
    const call = page.locator('details.tool-call');
    expect(await call.locator('summary').textContent()).to.equal('Tool call: echo ✓');
    await call.locator('summary').click();
    expect(await call.locator('.tool-arguments').textContent()).to.contain('"message": "hi"');
    expect(await call.locator('.tool-result').textContent()).to.equal('Result: Echo: hi');
    expect(await assistantTexts()).to.deep.equal(['echo returned: Echo: hi']);
    expect(await toolSpanFacts()).to.equal('MCP server "everything"');
  });

  it('asks before an MCP tool that requires approval; Approve runs it once', async () => {
    await send('call c_pid');
    const approval = page.locator('.approval');
    expect(await approval.locator('.approval-title').textContent()).to.equal('Approval needed: c_pid');
    expect(await pidCalls()).to.equal(0);
    await turn(() => approval.getByRole('button', { name: 'Approve c_pid' }).click());
    expect(await approval.locator('.approval-status').textContent()).to.equal('Approved c_pid.');
    expect(await page.locator('details.tool-call summary').textContent()).to.equal('Tool call: c_pid ✓');
    expect(await page.locator('details.tool-call .tool-result').textContent()).to.match(/^Result: \d+$/);
    expect((await assistantTexts()).at(-1)).to.match(/^c_pid returned: \d+$/);
    expect(await pidCalls()).to.equal(1);
    expect(await toolSpanFacts()).to.equal('MCP server "counter" (tool "pid" there)');
  });

  it('shows the calls the service made on a hosted MCP server as tool calls naming the server, live and when the thread is reopened', async () => {
    await page.selectOption('#agent', 'hosted');
    await send('call echo {"message":"hosted"}');
    const summary = 'Tool call: echo (MCP server "everything", called by the service) ✓';
    expect(await page.locator('details.tool-call summary').allTextContents()).to.deep.equal([summary]);
    expect(await page.locator('details.tool-call .tool-result').textContent()).to.equal('Result: Echo: hosted');
    expect(await assistantTexts()).to.deep.equal(['echo returned: Echo: hosted']);

    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await page.locator('#thread-list .thread', { hasText: 'call echo' }).locator('button.open').click();
    await page.waitForFunction(() => !document.querySelector('.turn') && document.querySelectorAll('details.tool-call').length === 1);
    expect(await page.locator('details.tool-call summary').allTextContents()).to.deep.equal([summary]);
    expect(await page.locator('#messages').textContent()).not.to.contain('hosted-mcp');
  });

  it('an agent whose MCP server cannot start: the tools panel says why, and a turn shows the error', async () => {
    await page.selectOption('#agent', 'broken');
    await page.waitForSelector('#tools-errors:not([hidden])');
    expect(await page.locator('#tool-list button').allTextContents()).to.deep.equal(['get_weather']);
    expect(await page.textContent('#tools-errors')).to.match(/^Could not list the tools of mcp:dead: McpConnectionError: MCP server "dead" .*MISSING_SETTING is not set/);
    await send('hello');
    expect(await page.textContent('#error-text')).to.match(/^McpConnectionError: MCP server "dead"/);
    expect(await page.inputValue('#input')).to.equal('hello');
  });
});
