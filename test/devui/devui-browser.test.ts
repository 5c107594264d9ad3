import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { tableBookings } from '../../samples/devui/devui-tools-plugin.js';
import { startFixture, type DevUIFixture, type FixtureOptions } from './devui-fixture.js';
import { devuiSend, devuiTurn, launchChromium } from '../support/chromium.js';


describe('Dev UI in headless Chromium', function () {
  // Launching a browser takes a few seconds on a cold machine; no assertion depends on time.
  this.timeout(60_000);
  let browser: Browser;
  let fx: DevUIFixture;
  let context: BrowserContext;
  let page: Page;

  before(async function () {
    browser = await launchChromium(this);
  });
  after(async () => {
    await browser?.close();
  });

  beforeEach(async () => {
    fx = await startFixture();
    // A context of its own per test: its cookies (the session) and downloads, as one browser profile.
    context = await browser.newContext({ acceptDownloads: true });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await open();
  });
  afterEach(async () => {
    await context?.close();
    await fx?.close();
  });

  /** Replaces the fixture (another config or options) and opens its printed address. */
  async function reopen(options: FixtureOptions): Promise<void> {
    await fx.close();
    fx = await startFixture(options);
    await open();
  }

  async function open(): Promise<void> {
    // As a user does: the address the Dev UI printed, with its access token.
    await page.goto(fx.devui.pageUrl);
    await page.waitForSelector('body[data-ready="true"]');
  }

  const turn = (start: () => Promise<void>) => devuiTurn(page, start);
  const send = (text: string) => devuiSend(page, text);

  const assistantTexts = () => page.locator('.message[data-role="assistant"] .text').allTextContents();
  const sidebarTitles = () => page.locator('#thread-list .thread .title').allTextContents();

  async function openThread(title: string): Promise<void> {
    await page.locator('#thread-list .thread', { hasText: title }).locator('button.open').click();
    // Opening re-renders the history from the server: the turn markers of this session are gone then.
    await page.waitForFunction((t) => document.getElementById('thread-title')?.textContent === t && !document.querySelector('.turn'), title);
  }

  it('chats with streamed tokens and usage; after a reload the thread is in the sidebar, opens, and continues with memory', async () => {
    await send('My name is Alice');
    expect(await assistantTexts()).to.deep.equal(['Nice to meet you, Alice!']);
    expect(await page.locator('.usage').textContent()).to.match(/^Usage: \d+ in · \d+ out · \d+ total$/);
    expect(await page.inputValue('#input')).to.equal('');

    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    expect(await sidebarTitles()).to.deep.equal(['My name is Alice']);
    expect(await page.locator('.message').count()).to.equal(0);

    await openThread('My name is Alice');
    expect(await page.locator('.message').evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.role))).to.deep.equal(['user', 'assistant']);
    expect(await page.locator('.message[data-role="assistant"] .author').textContent()).to.equal('assistant');

    await send("What's my name?");
    expect((await assistantTexts()).at(-1)).to.equal('Your name is Alice.');
    expect(await sidebarTitles()).to.deep.equal(['My name is Alice']);
  });

  it('shows tool calls and their results inline, collapsed until opened', async () => {
    await send('call get_weather {"city":"Paris"}');
    const call = page.locator('details.tool-call');
    expect(await call.count()).to.equal(1);
    expect(await call.locator('summary').textContent()).to.equal('Tool call: get_weather ✓');
    expect(await call.evaluate((d) => (d as HTMLDetailsElement).open)).to.equal(false);
    expect(await call.locator('.tool-result').isVisible()).to.equal(false);
    await call.locator('summary').click();
    expect(await call.locator('.tool-result').isVisible()).to.equal(true);
    expect(await call.locator('.tool-result').textContent()).to.contain('"forecast": "sunny"');
    expect((await assistantTexts()).at(-1)).to.contain('get_weather returned');
  });

  describe('function approvals', () => {
    const restaurant = (label: string) => `${label} ${Math.random().toString(36).slice(2, 8)}`;
    const bookingsAt = (name: string) => tableBookings().filter((b) => b.restaurant === name);
    const askToBook = (name: string) => send(`call book_table ${JSON.stringify({ restaurant: name, time: '20:00', people: 4 })}`);

    it('asks before running a tool that requires approval; Approve runs it and streams the answer, typed text untouched', async () => {
      const name = restaurant('Trattoria');
      await askToBook(name);
      const approval = page.locator('.approval');
      expect(await approval.count()).to.equal(1);
      expect(await approval.getAttribute('data-state')).to.equal('pending');
      expect(await approval.locator('.approval-title').textContent()).to.equal('Approval needed: book_table');
      expect(JSON.parse((await approval.locator('.approval-arguments').textContent())!)).to.deep.equal({ restaurant: name, time: '20:00', people: 4 });
      expect(await page.locator('details.tool-call summary').textContent()).to.equal('Tool call: book_table');
      expect(await page.locator('#thread-list .thread .awaiting').textContent()).to.equal('awaiting approval');
      expect(bookingsAt(name)).to.deep.equal([]);

      // Something typed but not sent stays in the box through the approval turn.
      await page.fill('#input', 'a draft');
      await turn(() => approval.getByRole('button', { name: 'Approve book_table' }).click());
      const [booking] = bookingsAt(name);
      expect(booking).to.not.equal(undefined);
      expect(await approval.getAttribute('data-state')).to.equal('settled');
      expect(await approval.locator('.approval-status').textContent()).to.equal('Approved book_table.');
      expect(await approval.locator('button.approve').isDisabled()).to.equal(true);
      expect(await page.locator('details.tool-call summary').textContent()).to.equal('Tool call: book_table ✓');
      expect(await page.locator('details.tool-call .tool-result').textContent()).to.contain(booking.bookingId);
      expect(await page.locator('.message[data-role="user"] .text').last().textContent()).to.equal('Approved book_table');
      expect((await assistantTexts()).at(-1)).to.contain('book_table returned:').and.contain(booking.bookingId);
      expect(await page.locator('#thread-list .thread .awaiting').count()).to.equal(0);
      expect(await page.inputValue('#input')).to.equal('a draft');
    });

    it('with two pending calls, the answers go together once both are answered', async () => {
      const [a, b] = [restaurant('Sushi'), restaurant('Tapas')];
      await send(`call book_table ${JSON.stringify({ restaurant: a, time: '18:00', people: 2 })} and call book_table ${JSON.stringify({ restaurant: b, time: '21:00', people: 2 })}`);
      const blocks = page.locator('.approval');
      expect(await blocks.count()).to.equal(2);
      const turns = await page.locator('.turn').count();
      await blocks.nth(0).getByRole('button', { name: 'Approve book_table' }).click();
      expect(await blocks.nth(0).locator('.approval-status').textContent()).to.equal('Approved book_table. Answer the other request to continue.');
      expect(await page.locator('.turn').count()).to.equal(turns);
      expect(bookingsAt(a)).to.deep.equal([]);
      await turn(() => blocks.nth(1).getByRole('button', { name: 'Reject book_table' }).click());
      expect(await page.locator('.message[data-role="user"] .text').last().textContent()).to.equal(`Approved book_table\nRejected book_table`);
      expect(bookingsAt(a)).to.have.length(1);
      expect(bookingsAt(b)).to.deep.equal([]);
      expect(await blocks.evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.state))).to.deep.equal(['settled', 'settled']);
    });

    it('a service error after approving shows the error; the tool ran once and its result is kept, so it cannot run twice', async () => {
      const name = restaurant('Osteria');
      await askToBook(name);
      fx.emulator.injectFault({ kind: 'status', status: 500, times: 3, retryAfterSeconds: 0, message: 'The emulated service broke.' });
      const approval = page.locator('.approval');
      await turn(() => approval.getByRole('button', { name: 'Approve book_table' }).click());
      expect(await page.textContent('#error-text')).to.match(/\(HTTP 500\): .*The emulated service broke\./);
      // The agent ran the approved tool before the model call failed; it keeps that result.
      expect(bookingsAt(name)).to.have.length(1);
      expect(await approval.getAttribute('data-state')).to.equal('settled');
      expect(await approval.locator('.approval-status').textContent()).to.contain('it ran and its result is kept');
      await page.fill('#input', 'What did we talk about?');
      await turn(() => page.click('#send'));
      expect((await assistantTexts()).at(-1)).to.contain('We talked about');
      expect(bookingsAt(name)).to.have.length(1);
    });

    it('after a reload the thread still asks (from its state); Reject with a reason: the tool does not run and the model is told why', async () => {
      const name = restaurant('Bistro');
      await askToBook(name);
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      expect(await page.locator('#thread-list .thread .awaiting').textContent()).to.equal('awaiting approval');
      const [title] = await sidebarTitles();
      await openThread(title!);

      const approval = page.locator('.approval');
      expect(await approval.getAttribute('data-state')).to.equal('pending');
      expect(await approval.locator('.approval-title').textContent()).to.equal('Approval needed: book_table');
      // Shown with the call it belongs to, in the assistant's message.
      expect(await page.locator('.message[data-role="assistant"] details.tool-call + .approval').count()).to.equal(1);
      expect(await approval.locator('button.approve').isEnabled()).to.equal(true);

      await approval.getByRole('textbox').fill('we are eating at home');
      await turn(() => approval.getByRole('button', { name: 'Reject book_table' }).click());
      expect(bookingsAt(name)).to.deep.equal([]);
      expect(await approval.locator('.approval-status').textContent()).to.equal('Rejected book_table: we are eating at home.');
      expect(await page.locator('details.tool-call summary').textContent()).to.equal('Tool call: book_table (failed)');
      expect((await assistantTexts()).at(-1)).to.contain('the user rejected this call: we are eating at home');

      // Opened again, the thread has nothing left to answer.
      await openThread(title!);
      expect(await page.locator('.approval').count()).to.equal(0);
      expect(await page.locator('details.tool-call .tool-result').textContent()).to.contain('we are eating at home');
    });
  });

  it('downloads a thread as JSON and loads the file back as a thread that continues', async () => {
    await send('My name is Bob');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    const file = await download.path();
    const serialized = JSON.parse(await readFile(file, 'utf8')) as { $type: string; agent: string };
    expect(serialized).to.include({ $type: 'in-memory', agent: 'assistant' });

    await page.click('#new-chat');
    await page.setInputFiles('#upload', file);
    await page.waitForFunction(() => document.querySelectorAll('#thread-list .thread').length === 2);
    await page.waitForSelector('.message[data-role="assistant"]');
    expect(await page.textContent('#thread-title')).to.equal('My name is Bob');
    const loadedId = await page.locator('#thread-list .thread.active').getAttribute('data-id');
    await send("What's my name?");
    expect((await assistantTexts()).at(-1)).to.equal('Your name is Bob.');
    expect(await page.locator('#thread-list .thread').first().getAttribute('data-id')).to.equal(loadedId);
  });

  it('a file that is not a thread shows a readable error and adds nothing', async () => {
    await page.setInputFiles('#upload', { name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"$type":"in-memory","version":99,"provider":"openai-chat"}') });
    await page.waitForSelector('#error:not([hidden])');
    expect(await page.textContent('#error-text')).to.match(/^SerializationError: .*version/);
    expect(await page.locator('#thread-list .thread').count()).to.equal(0);
  });

  it('stop aborts a long reply: partial text shown, typed input kept, thread unchanged', async () => {
    await send('My name is Dan');
    fx.emulator.injectFault({ kind: 'stall-stream', afterEvents: 2, path: '/v1/chat/completions' });
    await page.fill('#input', 'Tell me a long story');
    await page.click('#send');
    await page.waitForSelector('.turn[data-state="running"] ~ .message[data-role="assistant"] .text');
    await page.click('#stop');
    await page.waitForSelector('.turn[data-state="stopped"]', { state: 'attached' });
    await fx.emulator.waitForAbortedStream();
    expect(await page.textContent('.turn-note')).to.equal('Stopped. The thread is unchanged.');
    expect(await page.inputValue('#input')).to.equal('Tell me a long story');
    expect(await page.isEnabled('#send')).to.equal(true);

    await openThread('My name is Dan');
    expect(await page.locator('.message').count()).to.equal(2);
  });

  it('an injected 500 shows a readable error and keeps the typed input', async () => {
    fx.emulator.injectFault({ kind: 'status', status: 500, times: 3, retryAfterSeconds: 0, message: 'The emulated service broke.' });
    await send('Will this work?');
    const error = await page.textContent('#error-text');
    expect(error).to.match(/Error \(HTTP 500\): .*The emulated service broke\./);
    expect(await page.inputValue('#input')).to.equal('Will this work?');
    expect(await page.locator('#thread-list .thread').count()).to.equal(0);

    await send('Will this work?');
    expect(await page.locator('#thread-list .thread').count()).to.equal(1);
    expect(await page.inputValue('#input')).to.equal('');
  });

  it('deletes a thread after confirmation; a service thread is deleted on the service too', async () => {
    await send('keep me');
    await page.click('#new-chat');
    await page.selectOption('#agent', 'responses');
    await send('My name is Carol');
    expect(await sidebarTitles()).to.deep.equal(['My name is Carol', 'keep me']);

    const questions: string[] = [];
    page.once('dialog', (dialog) => {
      questions.push(dialog.message());
      void dialog.dismiss();
    });
    await page.locator('#thread-list .thread', { hasText: 'My name is Carol' }).locator('button.delete').click();
    await page.waitForFunction(() => true);
    expect(questions).to.have.length(1);
    expect(questions[0]).to.match(
      /^Delete this thread\?\n\nDeletes "My name is Carol": service thread resp_\w+ \(openai-responses\) is kept by the service and will be deleted there too, then removed from the Dev UI\.$/,
    );
    expect(await sidebarTitles()).to.deep.equal(['My name is Carol', 'keep me']);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.locator('#thread-list .thread', { hasText: 'My name is Carol' }).locator('button.delete').click();
    await page.waitForFunction(() => document.querySelectorAll('#thread-list .thread').length === 1);
    expect(await sidebarTitles()).to.deep.equal(['keep me']);
    expect(fx.emulator.requests.some((r) => r.method === 'DELETE')).to.equal(true);
    expect(await page.textContent('#thread-title')).to.equal('New chat');
  });
  describe('access: only this page, opened from the printed address, drives the Dev UI', () => {
    it('trades the printed token for an HttpOnly SameSite=Strict cookie and drops it from the address bar', async () => {
      expect(page.url()).to.equal(`${fx.devui.url}/`);
      const cookies = await context.cookies(fx.devui.url);
      expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).to.deep.equal([[`skein-token-${fx.devui.port}`, true, 'Strict']]);
      expect(await page.evaluate(() => document.cookie)).to.equal('');
      await send('My name is Alice');
      expect(await assistantTexts()).to.deep.equal(['Nice to meet you, Alice!']);
    });

    it('opened without the token (another browser profile): a readable error, no agents, no threads', async () => {
      await send('something private');
      const strangerContext = await browser.newContext();
      const stranger = await strangerContext.newPage();
      try {
        await stranger.goto(fx.devui.url);
        await stranger.waitForSelector('body[data-ready="failed"]');
        expect(await stranger.textContent('#error-text')).to.match(/^RequestRefusedError: This server needs its access token: open the address the Dev UI printed/);
        expect(await stranger.locator('#thread-list .thread').count()).to.equal(0);
        expect(await stranger.locator('#agent option').count()).to.equal(0);
      } finally {
        await strangerContext.close();
      }
    });

    it('a DNS-rebound page (its name now resolves to 127.0.0.1) gets 403 for the page and every call, and runs nothing', async () => {
      await send('My secret is plum');
      const calls = fx.emulator.requestsTo('/v1/chat/completions').length;
      const rebound = await context.newPage();
      try {
        const response = await rebound.goto(`http://rebind.test:${fx.devui.port}/`);
        expect(response!.status()).to.equal(403);
        expect(await rebound.textContent('body')).to.contain('--allowed-host');
        const results = await rebound.evaluate(async () => {
          const threads = await fetch('/api/threads');
          const chat = await fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ agent: 'assistant', text: 'tell me the secret' }) });
          return [threads.status, await threads.text(), chat.status];
        });
        expect(results[0]).to.equal(403);
        expect(results[1]).to.not.contain('plum');
        expect(results[2]).to.equal(403);
      } finally {
        await rebound.close();
      }
      expect(fx.emulator.requestsTo('/v1/chat/completions')).to.have.length(calls);
      expect(await readdir(fx.threadsDir)).to.have.length(1);
    });

    it('a page of another local origin (same site, so the cookie goes along) cannot post a turn: no-cors fetch and a form both get 403', async () => {
      const attacker: Server = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!doctype html><form id="f" method="post" enctype="text/plain"><input name=\'{"agent":"assistant","text":"x","pad":"\' value=\'"}\'></form>');
      });
      await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
      const evil = await context.newPage();
      try {
        await evil.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
        const target = `${fx.devui.url}/api/chat`;
        const status = await evil.evaluate(async (url) => {
          await fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ agent: 'assistant', text: 'run my tool' }) });
          const read = await fetch(url.replace('/api/chat', '/api/threads'), { credentials: 'include' }).then(
            () => 'read',
            () => 'blocked',
          );
          return read;
        }, target);
        expect(status).to.equal('blocked');
        const [formReply] = await Promise.all([
          evil.waitForResponse((r) => r.url() === target),
          evil.evaluate((url) => {
            const form = document.getElementById('f') as HTMLFormElement;
            form.action = url;
            form.submit();
          }, target),
        ]);
        expect(formReply.status()).to.equal(403);
        expect(await formReply.text()).to.contain('not allowed');
      } finally {
        await evil.close();
        await new Promise((resolve) => attacker.close(resolve));
      }
      expect(fx.emulator.requestsTo('/v1/chat/completions')).to.have.length(0);
      expect(await fx.devui.threads.list()).to.deep.equal([]);
    });
  });

  describe('loading a thread whose SQLite store key is already listed', () => {
    it('opens the listed entry and says so; "Load as a copy" makes an independent thread; delete names the store and key', async () => {
      await reopen({ config: 'sqlite' });
      await send('My name is Ann');
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
      const file = await download.path();
      const key = (JSON.parse(await readFile(file, 'utf8')) as { store: { key: string } }).store.key;

      await page.click('#new-chat');
      await page.setInputFiles('#upload', file);
      await page.waitForSelector('#load-note:not([hidden])');
      expect(await page.textContent('#load-note-text')).to.equal(
        `This thread is already listed as "My name is Ann" (sqlite store, key ${key}); opened it instead of adding a second entry on the same history. Load it as a copy to get an independent thread.`,
      );
      expect(await sidebarTitles()).to.deep.equal(['My name is Ann']);
      expect(await page.textContent('#thread-title')).to.equal('My name is Ann');
      expect(await page.locator('.message').count()).to.equal(2);

      await page.click('#load-copy');
      await page.waitForFunction(() => document.querySelectorAll('#thread-list .thread').length === 2);
      await page.waitForFunction(() => document.getElementById('thread-title')?.textContent === 'My name is Ann (copy)');
      expect(await page.textContent('#load-note-text')).to.match(/^Loaded as a copy: 2 messages copied to a new sqlite store key \([^)]+\); the original is unchanged\.$/);
      expect(await page.isHidden('#load-copy')).to.equal(true);
      await send('My name is Zed');
      expect((await assistantTexts()).at(-1)).to.equal('Nice to meet you, Zed!');

      const questions: string[] = [];
      page.once('dialog', (dialog) => {
        questions.push(dialog.message());
        void dialog.accept();
      });
      await page.locator('#thread-list .thread', { hasText: 'My name is Ann (copy)' }).locator('button.delete').click();
      await page.waitForFunction(() => document.querySelectorAll('#thread-list .thread').length === 1);
      expect(questions[0]).to.match(/^Delete this thread\?\n\nDeletes "My name is Ann \(copy\)": its history in the sqlite store \(key [^)]+\) is deleted, then the thread is removed from the Dev UI\.$/);
      expect(questions[0]).to.not.contain(key);

      await openThread('My name is Ann');
      await send("What's my name?");
      expect((await assistantTexts()).at(-1)).to.equal('Your name is Ann.');
    });
  });

  describe('page quality: no console errors, labelled keyboard-reachable controls', () => {
    it('loads, chats, asks for approval and reopens a thread with no console error, page error or failed request', async () => {
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('response', (response) => {
        if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
      });
      await open();
      await send('call get_weather {"city":"Paris"}');
      await send('call book_table {"restaurant":"Chez Nous","time":"19:00","people":2}');
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      await openThread('call get_weather {"city":"Paris"}');
      // The browser asks for an icon on its own (not always through the page's events): both addresses answer with one.
      const icons = await page.evaluate(async () =>
        Promise.all(['/favicon.ico', document.querySelector<HTMLLinkElement>('link[rel="icon"]')!.href].map(async (url) => {
          const response = await fetch(url);
          return `${response.status} ${response.headers.get('content-type')}`;
        })),
      );
      expect(icons).to.deep.equal(['200 image/svg+xml', '200 image/svg+xml']);
      expect(problems).to.deep.equal([]);
    });

    it('every control has an accessible name (from Chromium\'s accessibility tree) and Tab reaches each one', async () => {
      await send('call get_weather {"city":"Paris"}');
      await send('call book_table {"restaurant":"Chez Nous","time":"19:00","people":2}');
      const cdp = await context.newCDPSession(page);
      const unnamedControls = async (atLeast: number) => {
        const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: { ignored: boolean; role?: { value: string }; name?: { value: string } }[] };
        const controlRoles = new Set(['button', 'combobox', 'textbox', 'link', 'checkbox', 'radio', 'spinbutton', 'searchbox', 'listbox', 'DisclosureTriangle']);
        const controls = nodes.filter((n) => !n.ignored && controlRoles.has(n.role?.value ?? ''));
        expect(controls.length).to.be.at.least(atLeast);
        return controls.filter((n) => !n.name?.value.trim()).map((n) => n.role?.value);
      };
      await page.click('#run-settings summary');
      expect(await unnamedControls(20)).to.deep.equal([]);
      // The tool form (a modal dialog: the page behind it is inert) too.
      await page.getByRole('button', { name: 'Run tool book_table by hand' }).click();
      expect(await unnamedControls(5)).to.deep.equal([]);
      await page.keyboard.press('Escape');

      // Number every visible, enabled control, then Tab through the page and see which ones get focus.
      const count = await page.evaluate(() => {
        const all = Array.from(document.querySelectorAll<HTMLElement>('button, select, textarea, input, a[href], summary'));
        const usable = all.filter((e) => e.checkVisibility() && !(e as HTMLButtonElement).disabled);
        usable.forEach((e, i) => (e.dataset.kb = String(i)));
        return usable.length;
      });
      const reached = new Set<string>();
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      for (let i = 0; i < count + 5; i++) {
        await page.keyboard.press('Tab');
        const kb = await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.kb);
        if (kb !== undefined) reached.add(kb);
      }
      const missed = await page.evaluate((seen) => Array.from(document.querySelectorAll<HTMLElement>('[data-kb]')).filter((e) => !seen.includes(e.dataset.kb!)).map((e) => e.outerHTML.slice(0, 80)), [...reached]);
      expect(missed).to.deep.equal([]);
    });
  });

  describe('readable messages', () => {
    /** A 1x1 PNG. */
    const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

    it('renders the reply as Markdown; a malicious message executes nothing and stays text', async () => {
      const hostile = [
        '**bold** <img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script>',
        '[click](javascript:window.__pwned=3) [docs](https://example.com/docs) [x" onmouseover="window.__pwned=4](https://example.com/")',
        '```js',
        'const answer = 42; // <b>not bold</b>',
        '```',
        'end',
      ].join('\n');
      await page.fill('#input', hostile);
      await turn(() => page.click('#send'));
      const reply = page.locator('.message[data-role="assistant"] .text.markdown').last();
      expect(await reply.locator('strong').first().textContent()).to.equal('bold');
      expect(await reply.textContent()).to.contain('<img src=x onerror="window.__pwned=1">').and.contain('<script>window.__pwned=2</script>').and.contain('[click](javascript:');
      expect(await reply.locator('script, img, b, [onmouseover], [onerror]').count()).to.equal(0);
      const links = await reply.locator('a').evaluateAll((as) => as.map((a) => [a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')]));
      expect(links).to.deep.equal([
        ['https://example.com/docs', '_blank', 'noopener noreferrer'],
        ['https://example.com/"', '_blank', 'noopener noreferrer'],
      ]);
      // Hovering and clicking what the attacker wrote runs nothing either.
      await reply.locator('a').nth(1).hover();
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).to.equal(undefined);

      // The code block: verbatim, with a Copy button that puts exactly the code on the clipboard.
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: fx.devui.url });
      const block = reply.locator('.code-block');
      expect(await block.locator('code').textContent()).to.equal('const answer = 42; // <b>not bold</b>');
      await block.getByRole('button', { name: 'Copy code' }).click();
      await page.waitForFunction(() => document.querySelector('.code-block .copy-code')?.textContent === 'Copied');
      expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal('const answer = 42; // <b>not bold</b>');

      // The same after a reload, rendered from the stored thread.
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      await page.locator('#thread-list .thread button.open').first().click();
      await page.waitForSelector('.message[data-role="assistant"] .markdown strong');
      expect(await page.locator('.message[data-role="assistant"] .markdown').locator('script, img, b').count()).to.equal(0);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).to.equal(undefined);
    });

    it('names the author once and shows when each message was written, live and from the stored thread', async () => {
      const before = Date.now();
      await send('My name is Alice');
      const heads = async () =>
        page.locator('.message').evaluateAll((nodes) => nodes.map((n) => [n.querySelector('.author')?.textContent, n.querySelector('time')?.getAttribute('datetime')]));
      const live = await heads();
      expect(live.map(([author]) => author)).to.deep.equal(['user', 'assistant']);
      for (const [, time] of live) expect(Date.parse(time!)).to.be.within(before - 1000, Date.now());
      // Reopened: each message the thread stamped shows its time (Chat Completions replies carry none in the store).
      await openThread('My name is Alice');
      const stored = await heads();
      expect(stored.map(([author]) => author)).to.deep.equal(['user', 'assistant']);
      expect(Date.parse(stored[0]![1]!)).to.be.within(before - 1000, Date.now());

      // A service thread's transcript (kept by the Dev UI) stamps every message.
      await page.click('#new-chat');
      await page.selectOption('#agent', 'responses');
      await send('My name is Rita');
      await openThread('My name is Rita');
      const transcript = await heads();
      // The agent's name once; the role beside it only because the two differ.
      expect(transcript.map(([author]) => author)).to.deep.equal(['user', 'responses · assistant']);
      for (const [, time] of transcript) expect(Date.parse(time!)).to.be.within(before - 1000, Date.now());
    });

    it('shows images a message carries (inline data and Markdown images)', async () => {
      await send('My name is Pia');
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
      const serialized = JSON.parse(await readFile(await download.path(), 'utf8')) as { store: { messages: { role: string; contents: unknown[] }[] } };
      const reply = serialized.store.messages.find((m) => m.role === 'assistant')!;
      reply.contents.push({ kind: 'data', data: PNG, mediaType: 'image/png' }, { kind: 'text', text: `\n\n![a pixel](data:image/png;base64,${PNG})` });
      await page.click('#new-chat');
      await page.setInputFiles('#upload', { name: 'with-image.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(serialized)) });
      await page.waitForFunction(() => document.querySelectorAll('.message[data-role="assistant"] img').length === 2);
      const images = await page.locator('.message[data-role="assistant"] img').evaluateAll((imgs) =>
        Promise.all((imgs as HTMLImageElement[]).map(async (img) => (await img.decode().then(() => img.naturalWidth)) as number)),
      );
      expect(images).to.deep.equal([1, 1]);
    });
  });

  describe('turn traces', () => {
    it('a turn with a tool call shows its timeline: the model call, the tool span and the second model call in order, with durations; the thread shows it again when opened', async () => {
      await send('call get_weather {"city":"Paris"}');
      const trace = page.locator('details.trace').last();
      expect(await trace.locator('summary').textContent()).to.match(/^Trace · 4 spans · \d+(\.\d+)? m?s$/);
      await trace.locator('summary').click();
      const rows = () =>
        trace.locator('.span-row').evaluateAll((nodes) =>
          nodes.map((n) => [n.querySelector('.span-name')!.textContent, n.querySelector('.span-duration')!.textContent, n.querySelector('.span-facts')?.textContent ?? '']),
        );
      const shown = await rows();
      expect(shown.map(([name]) => name)).to.deep.equal(['invoke_agent assistant', 'chat gpt-4.1-mini', 'execute_tool get_weather', 'chat gpt-4.1-mini']);
      for (const [, duration] of shown) expect(duration).to.match(/^\d+(\.\d+)? m?s$/);
      expect(shown[1]![2]).to.match(/^model gpt-4\.1-mini · tokens \d+ in \/ \d+ out · finish tool_calls$/);
      expect(shown[3]![2]).to.match(/finish stop$/);
      const tool = trace.locator('.span-row[data-operation="execute_tool"]');
      expect(await tool.locator('.span-arguments').textContent()).to.contain('"city": "Paris"');
      expect(await tool.locator('.span-result').textContent()).to.contain('"forecast": "sunny"');
      // The bars sit on one time axis: the first model call, then the tool, then the second call.
      const starts = await trace.locator('.span-fill').evaluateAll((nodes) => nodes.map((n) => parseFloat((n as HTMLElement).style.left)));
      expect(starts[2]).to.be.at.least(starts[1]!);
      expect(starts[3]).to.be.at.least(starts[2]!);

      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      await openThread('call get_weather {"city":"Paris"}');
      await page.waitForSelector('.thread-traces details.trace');
      expect(await page.locator('.thread-traces details.trace .span-row').count()).to.equal(4);
    });
  });

  describe('run settings', () => {
    it('settings from the form go with the next run and are shown with that turn (and its trace); Clear returns to the agent\'s', async () => {
      await page.click('#run-settings summary');
      await page.getByLabel('Temperature').fill('0.2');
      await page.getByLabel('Max tokens').fill('40');
      await page.getByLabel('Model').fill('gpt-4o-mini');
      await page.getByLabel('Extra instructions').fill('Be brief.');
      await send('My name is Ines');
      expect(await page.locator('.message[data-role="user"] + .turn-settings').textContent()).to.equal(
        'Run settings: temperature 0.2 · max tokens 40 · model gpt-4o-mini · extra instructions: Be brief.',
      );
      expect(await page.locator('details.trace .turn-settings').textContent()).to.contain('model gpt-4o-mini');
      const sent = fx.emulator.requestsTo('/v1/chat/completions').at(-1)!.body as { model: string; temperature: number };
      expect(sent).to.include({ model: 'gpt-4o-mini', temperature: 0.2 });

      await page.click('#settings-clear');
      await send("What's my name?");
      expect(await page.locator('.turn-settings').count()).to.equal(2); // the first turn's line and its trace's; none for this turn
      expect((fx.emulator.requestsTo('/v1/chat/completions').at(-1)!.body as { model: string }).model).to.equal('gpt-4.1-mini');
    });
  });

  describe('running a tool by hand', () => {
    it('builds a form from the tool\'s JSON Schema, runs it outside the conversation and shows the result; a bad value shows the tool\'s error', async () => {
      expect(await page.locator('#tool-list button').allTextContents()).to.deep.equal(['get_weather', 'book_table']);
      await page.getByRole('button', { name: 'Run tool book_table by hand' }).click();
      const dialog = page.locator('#tool-dialog');
      expect(await dialog.isVisible()).to.equal(true);
      expect(await dialog.locator('#tool-approval-note').isVisible()).to.equal(true);
      expect(await dialog.locator('#tool-fields label').evaluateAll((ls) => ls.map((l) => [(l as HTMLElement).dataset.name, (l as HTMLElement).dataset.type]))).to.deep.equal([
        ['restaurant', 'string'],
        ['time', 'string'],
        ['people', 'integer'],
      ]);
      const restaurant = `Form ${Math.random().toString(36).slice(2, 8)}`;
      await dialog.getByLabel('restaurant (required)').fill(restaurant);
      await dialog.getByLabel('time (required)').fill('13:00');
      await dialog.getByLabel('people (required)').fill('5');
      // A tool that needs approval runs only with the box ticked: the approval gate refuses it otherwise.
      await dialog.getByRole('button', { name: 'Run tool' }).click();
      await page.waitForSelector('#tool-output[data-outcome="error"]');
      expect(await page.textContent('#tool-output')).to.match(/^ToolApprovalRequiredError: Tool "book_table" needs the user's approval; it was not run\./);
      expect(tableBookings().filter((b) => b.restaurant === restaurant)).to.deep.equal([]);
      await dialog.getByLabel('In a conversation this tool asks for approval first: I approve running it now.').check();
      await dialog.getByRole('button', { name: 'Run tool' }).click();
      await page.waitForSelector('#tool-output[data-outcome="ok"]');
      const [booking] = tableBookings().filter((b) => b.restaurant === restaurant);
      expect(booking).to.include({ time: '13:00', people: 5 });
      expect(await page.textContent('#tool-output')).to.contain(booking!.bookingId);
      // Outside any conversation: no model call, no thread.
      expect(fx.emulator.requests).to.deep.equal([]);
      expect(await page.locator('#thread-list .thread').count()).to.equal(0);

      await dialog.getByLabel('people (required)').fill('-1');
      await dialog.getByRole('button', { name: 'Run tool' }).click();
      await page.waitForSelector('#tool-output[data-outcome="error"]');
      expect(await page.textContent('#tool-output')).to.match(/^Error: .*people/);
      await dialog.getByRole('button', { name: 'Close' }).click();
      expect(await dialog.isVisible()).to.equal(false);
    });
  });

  describe('finding threads', () => {
    it('searches by title and content, filters by agent, and renames the open thread', async () => {
      await send('Plans for dinner');
      await send('I would like fresh pasta');
      await page.click('#new-chat');
      await page.selectOption('#agent', 'responses');
      await send('My name is Quentin');
      expect(await sidebarTitles()).to.deep.equal(['My name is Quentin', 'Plans for dinner']);

      const shows = (titles: string[]) => page.waitForFunction((t) => JSON.stringify(Array.from(document.querySelectorAll('#thread-list .thread .title')).map((n) => n.textContent)) === JSON.stringify(t), titles);
      await page.getByLabel('Search threads by title and content').fill('pasta');
      await shows(['Plans for dinner']);
      expect(await page.locator('#thread-list .thread .excerpt').textContent()).to.contain('fresh pasta');
      await page.getByLabel('Search threads by title and content').fill('nothing like this');
      await shows([]);
      expect(await page.textContent('#threads-empty')).to.equal('No thread matches.');
      await page.getByLabel('Search threads by title and content').fill('');
      await page.getByLabel('Show threads of agent').selectOption('assistant');
      await shows(['Plans for dinner']);
      await page.getByLabel('Show threads of agent').selectOption('');
      await shows(['My name is Quentin', 'Plans for dinner']);

      await openThread('Plans for dinner');
      page.once('dialog', (dialog) => void dialog.accept('Dinner plans'));
      await page.click('#rename');
      await page.waitForFunction(() => document.getElementById('thread-title')?.textContent === 'Dinner plans');
      await shows(['My name is Quentin', 'Dinner plans']);
      await page.reload();
      await page.waitForSelector('body[data-ready="true"]');
      expect(await sidebarTitles()).to.deep.equal(['My name is Quentin', 'Dinner plans']);
    });
  });

  describe('fork from here', () => {
    it('forks an opened thread at a message: the fork opens with the history up to it and continues on its own', async () => {
      await send('My name is Ann');
      await send('My name is Bea');
      await openThread('My name is Ann');
      expect(await page.locator('.message button.fork').count()).to.equal(4);
      await page.getByRole('button', { name: 'Fork the thread from message 2' }).click();
      await page.waitForFunction(() => document.getElementById('thread-title')?.textContent === 'My name is Ann (fork at message 2)');
      expect(await page.locator('.message').count()).to.equal(2);
      await send("What's my name?");
      expect((await assistantTexts()).at(-1)).to.equal('Your name is Ann.');
      expect(await sidebarTitles()).to.deep.equal(['My name is Ann (fork at message 2)', 'My name is Ann']);
    });
  });
});
