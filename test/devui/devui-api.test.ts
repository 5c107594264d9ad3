import { expect } from 'chai';
import { readdir } from 'node:fs/promises';
import { tableBookings } from '../../samples/devui/devui-tools-plugin.js';
import { readSse, startFixture, type DevUIFixture, type SseEvent } from './devui-fixture.js';

interface Summary {
  id: string;
  agent: string;
  title: string;
  kind: string;
  type: string;
  serviceThreadId?: string;
  pendingApprovals: number;
}
interface Pending {
  callId: string;
  name: string;
  arguments: string;
}
interface ViewMessage {
  role: string;
  authorName?: string;
  contents: { kind: string; text?: string; name?: string; callId?: string; result?: unknown }[];
}

describe('Dev UI server API (no browser)', () => {
  let fx: DevUIFixture;
  let base: string;

  beforeEach(async () => {
    fx = await startFixture();
    base = fx.devui.url;
  });
  afterEach(async () => {
    await fx.close();
  });

  const json = async <T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> => {
    const response = await fx.fetch(path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
    return { status: response.status, body: (await response.json()) as T };
  };
  const chat = async (body: Record<string, unknown>, onEvent?: (e: SseEvent) => void | Promise<void>): Promise<SseEvent[]> => {
    const response = await fx.fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(response.headers.get('content-type')).to.match(/^text\/event-stream/);
    return readSse(response, onEvent);
  };
  const textOf = (events: SseEvent[]) => events.filter((e) => e.event === 'delta').map((e) => e.data.text).join('');
  const done = (events: SseEvent[]) => events.find((e) => e.event === 'done')?.data.thread as Summary;
  const thread = (id: string) => json<{ thread: Summary; history: string; messages: ViewMessage[]; pendingApprovals: Pending[] }>(`/api/threads/${id}`);
  const list = async () => (await json<{ threads: Summary[] }>('/api/threads')).body.threads;

  it('serves the page and its assets from the package, and lists the configured agents', async () => {
    const page = await fetch(base + '/');
    expect(await page.text()).to.contain('<script type="module" src="/app.js">');
    const script = await fetch(base + '/app.js');
    expect(script.headers.get('content-type')).to.match(/javascript/);
    expect(await script.text()).to.contain('/api/chat');
    const { body } = await json<{ agents: { name: string; client: string }[] }>('/api/agents');
    expect(body.agents.map((a) => [a.name, a.client])).to.deep.equal([
      ['assistant', 'openai-chat'],
      ['responses', 'openai-responses'],
    ]);
  });

  it('serves every module the page script imports, without the token, as JavaScript', async () => {
    // The browser resolves `./name.js` from /app.js to /name.js; follow the imports as it would.
    const seen = new Set<string>();
    const visit = async (address: string): Promise<void> => {
      if (seen.has(address)) return;
      seen.add(address);
      const response = await fetch(base + address);
      expect(response.status, address).to.equal(200);
      expect(response.headers.get('content-type'), address).to.match(/javascript/);
      const source = await response.text();
      for (const [, name] of source.matchAll(/(?:from|import)\s+'\.\/([\w-]+\.js)'/g)) await visit(`/${name}`);
    };
    await visit('/app.js');
    expect([...seen]).to.include.members(['/app.js', '/markdown.js', '/thread-list.js', '/approval-view.js', '/tool-runner.js']);
  });

  it('streams a reply as text deltas with usage, keeps the thread, and continues it with memory', async () => {
    const first = await chat({ agent: 'assistant', text: 'My name is Alice' });
    expect(first[0].event).to.equal('run');
    expect(first.filter((e) => e.event === 'delta').length).to.be.greaterThan(1);
    expect(textOf(first)).to.contain('Alice');
    const usage = first.find((e) => e.event === 'usage')!.data.usage as { totalTokens: number };
    expect(usage.totalTokens).to.be.greaterThan(0);
    const saved = done(first);
    expect(saved).to.include({ agent: 'assistant', title: 'My name is Alice', kind: 'store', type: 'in-memory' });

    const second = await chat({ threadId: saved.id, text: "What's my name?" });
    expect(textOf(second)).to.equal('Your name is Alice.');

    const { body } = await thread(saved.id);
    expect(body.history).to.equal('store');
    expect(body.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
    expect(body.messages[1].authorName).to.equal('assistant');
    expect(body.messages[3].contents[0]).to.deep.include({ kind: 'text', text: 'Your name is Alice.' });
  });

  it('relays tool calls and their results, and the thread shows them as messages', async () => {
    const events = await chat({ agent: 'assistant', text: 'call get_weather {"city":"Paris"}' });
    const call = events.find((e) => e.event === 'tool-call')!.data;
    expect(call).to.include({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    const result = events.find((e) => e.event === 'tool-result')!.data;
    expect(result).to.deep.include({ callId: call.callId, result: { city: 'Paris', forecast: 'sunny', temperatureC: 21 } });
    const { body } = await thread(done(events).id);
    expect(body.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
    expect(body.messages[1].contents[0]).to.include({ kind: 'function-call', name: 'get_weather' });
    expect(body.messages[2].contents[0]).to.deep.include({ kind: 'function-result', callId: call.callId });
  });

  describe('function approvals', () => {
    // Unique per run: the sample's bookings live in the process that loaded the plugin (this one).
    const restaurant = (label: string) => `${label} ${Math.random().toString(36).slice(2, 8)}`;
    const bookingsAt = (name: string) => tableBookings().filter((b) => b.restaurant === name);
    const askToBook = async (name: string) => {
      const events = await chat({ agent: 'assistant', text: `call book_table ${JSON.stringify({ restaurant: name, time: '19:30', people: 2 })}` });
      const request = events.find((e) => e.event === 'approval-request')!.data as unknown as Pending;
      expect(request).to.include({ name: 'book_table' });
      expect(events.some((e) => e.event === 'tool-result')).to.equal(false);
      return { events, request, saved: done(events) };
    };

    it('a tool that requires approval waits: the thread keeps the pending request and the tool has not run', async () => {
      const name = restaurant('Chez Waiting');
      const { request, saved, events } = await askToBook(name);
      expect(saved.pendingApprovals).to.equal(1);
      expect(events.find((e) => e.event === 'done')!.data.pendingApprovals).to.deep.equal([request]);
      expect((await list())[0].pendingApprovals).to.equal(1);
      const { body } = await thread(saved.id);
      expect(body.pendingApprovals).to.deep.equal([{ callId: request.callId, name: 'book_table', arguments: request.arguments }]);
      expect(body.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
      expect(body.messages[1].contents[0]).to.include({ kind: 'function-call', callId: request.callId });
      // A downloaded and re-loaded copy of the thread waits for the same call.
      const serialized = await (await fx.fetch(`/api/threads/${saved.id}/json`)).json();
      const imported = await json<{ thread: Summary }>('/api/threads/import', { method: 'POST', body: JSON.stringify({ serialized }) });
      expect(imported.body.thread.pendingApprovals).to.equal(1);
      expect((await thread(imported.body.thread.id)).body.pendingApprovals).to.deep.equal([request]);
      expect(bookingsAt(name)).to.deep.equal([]);
    });

    it('approving runs the tool and streams its result, then the answer that uses it', async () => {
      const name = restaurant('Chez Yes');
      const { request, saved } = await askToBook(name);
      const events = await chat({ threadId: saved.id, approvals: [{ callId: request.callId, approved: true }] });
      expect(events.map((e) => e.event).filter((e) => e !== 'delta')).to.deep.equal(['run', 'tool-result', 'trace', 'usage', 'done']);
      const result = events.find((e) => e.event === 'tool-result')!.data;
      expect(result).to.deep.include({ callId: request.callId });
      expect(result.result).to.include({ booked: true, restaurant: name, time: '19:30', people: 2 });
      const [booking] = bookingsAt(name);
      expect(booking).to.not.equal(undefined);
      expect(textOf(events)).to.contain('book_table returned:').and.contain(booking.bookingId);
      expect(done(events)).to.include({ id: saved.id, pendingApprovals: 0 });

      const { body } = await thread(saved.id);
      expect(body.pendingApprovals).to.deep.equal([]);
      expect(body.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
      expect(body.messages[2].contents[0]).to.deep.include({ kind: 'function-result', callId: request.callId });
      // Answered once: a second answer (another tab, a double click) is refused and runs nothing.
      const again = await json<{ error: { message: string } }>('/api/chat', { method: 'POST', body: JSON.stringify({ threadId: saved.id, approvals: [{ callId: request.callId, approved: true }] }) });
      expect(again.status).to.equal(409);
      expect(again.body.error.message).to.contain('not waiting for approval');
      expect(bookingsAt(name)).to.have.length(1);
    });

    it('a Stop after an approved tool ran keeps its result: the call is settled and cannot run again', async () => {
      const name = restaurant('Chez Stop');
      const { request, saved } = await askToBook(name);
      fx.emulator.injectFault({ kind: 'stall-stream', afterEvents: 2, path: '/v1/chat/completions' });
      let runId: unknown;
      let stopped = false;
      const events = await chat({ threadId: saved.id, approvals: [{ callId: request.callId, approved: true }] }, async (e) => {
        if (e.event === 'run') runId = e.data.runId;
        if (e.event === 'delta' && !stopped) {
          stopped = true;
          await json(`/api/runs/${String(runId)}/stop`, { method: 'POST' });
        }
      });
      expect(events.at(-1)!.event).to.equal('stopped');
      expect(bookingsAt(name)).to.have.length(1);
      await fx.emulator.waitForAbortedStream();
      // Saved once the aborted run let go of the thread: polled, as the page would on its next turn.
      let view = (await thread(saved.id)).body;
      for (let i = 0; i < 500 && view.pendingApprovals.length > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        view = (await thread(saved.id)).body;
      }
      expect(view.pendingApprovals).to.deep.equal([]);
      expect(view.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool']);
      const again = await json('/api/chat', { method: 'POST', body: JSON.stringify({ threadId: saved.id, approvals: [{ callId: request.callId, approved: true }] }) });
      expect(again.status).to.equal(409);
      expect(bookingsAt(name)).to.have.length(1);
    });

    it('rejecting with a reason does not run the tool, and the model is told why', async () => {
      const name = restaurant('Chez No');
      const { request, saved } = await askToBook(name);
      const events = await chat({ threadId: saved.id, approvals: [{ callId: request.callId, approved: false, reason: 'too late in the evening' }] });
      const result = events.find((e) => e.event === 'tool-result')!.data;
      expect(result).to.include({ callId: request.callId });
      expect(result.error).to.contain('rejected').and.contain('too late in the evening');
      expect(bookingsAt(name)).to.deep.equal([]);
      // What the model was sent: the rejection and its reason as the call's result.
      const last = fx.emulator.requestsTo('/v1/chat/completions').at(-1)!.body as { messages: { role: string; tool_call_id?: string; content: string }[] };
      const toolMessage = last.messages.find((m) => m.role === 'tool' && m.tool_call_id === request.callId)!;
      expect(toolMessage.content).to.contain('rejected this call: too late in the evening');
      expect(textOf(events)).to.contain('book_table returned: Error: not run: the user rejected this call: too late in the evening');
      expect((await thread(saved.id)).body.pendingApprovals).to.deep.equal([]);
    });

    it('the pending request survives a restart of the Dev UI (read back from the thread state) and can be answered then', async () => {
      const name = restaurant('Chez Later');
      const { request, saved } = await askToBook(name);
      await fx.restart();
      expect((await thread(saved.id)).body.pendingApprovals).to.deep.equal([request]);
      await chat({ threadId: saved.id, approvals: [{ callId: request.callId, approved: true }] });
      expect(bookingsAt(name)).to.have.length(1);
    });

    it('a typed message instead of an answer declines the pending call (the tool does not run)', async () => {
      const name = restaurant('Chez Moved On');
      const { request, saved } = await askToBook(name);
      const events = await chat({ threadId: saved.id, text: 'never mind' });
      const result = events.find((e) => e.event === 'tool-result')!.data;
      expect(result).to.include({ callId: request.callId });
      expect(result.error).to.contain('did not approve');
      expect(bookingsAt(name)).to.deep.equal([]);
      expect((await thread(saved.id)).body.pendingApprovals).to.deep.equal([]);
    });

    it('works on a service thread (Responses) too: the transcript shows the request, the answer and the result', async () => {
      const name = restaurant('Chez Service');
      const first = await chat({ agent: 'responses', text: `call book_table ${JSON.stringify({ restaurant: name, time: '12:00', people: 3 })}` });
      const request = first.find((e) => e.event === 'approval-request')!.data as unknown as Pending;
      const saved = done(first);
      expect(saved).to.include({ kind: 'service', pendingApprovals: 1 });
      expect((await thread(saved.id)).body.pendingApprovals).to.deep.equal([request]);
      const events = await chat({ threadId: saved.id, approvals: [{ callId: request.callId, approved: true }] });
      const [booking] = bookingsAt(name);
      expect(booking).to.not.equal(undefined);
      expect(textOf(events)).to.contain(booking.bookingId);
      const { body } = await thread(saved.id);
      expect(body.history).to.equal('transcript');
      expect(body.pendingApprovals).to.deep.equal([]);
      expect(body.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'tool', 'assistant']);
      expect(body.messages[1].contents.map((c) => c.kind)).to.deep.equal(['function-call', 'function-approval-request']);
      expect(body.messages[2].contents).to.deep.equal([{ kind: 'function-approval-response', callId: request.callId, approved: true }]);
    });

    it('bad answers get typed 4xx errors and change nothing', async () => {
      const name = restaurant('Chez Strict');
      const { request, saved } = await askToBook(name);
      const post = (body: unknown) => json<{ error: { message: string } }>('/api/chat', { method: 'POST', body: JSON.stringify(body) });
      const noThread = await post({ agent: 'assistant', approvals: [{ callId: request.callId, approved: true }] });
      expect(noThread.status).to.equal(400);
      expect(noThread.body.error.message).to.contain('threadId');
      const notBoolean = await post({ threadId: saved.id, approvals: [{ callId: request.callId, approved: 'yes' }] });
      expect(notBoolean.status).to.equal(400);
      const unknownCall = await post({ threadId: saved.id, approvals: [{ callId: 'call_nope', approved: true }] });
      expect(unknownCall.status).to.equal(409);
      expect(unknownCall.body.error.message).to.contain(request.callId);
      const twice = await post({ threadId: saved.id, approvals: [{ callId: request.callId, approved: true }, { callId: request.callId, approved: false }] });
      expect(twice.status).to.equal(400);
      expect(bookingsAt(name)).to.deep.equal([]);
      expect((await thread(saved.id)).body.pendingApprovals).to.deep.equal([request]);
    });
  });

  it('lists threads newest first (by last turn)', async () => {
    const a = done(await chat({ agent: 'assistant', text: 'first thread' }));
    const b = done(await chat({ agent: 'assistant', text: 'second thread' }));
    expect((await list()).map((t) => t.id)).to.deep.equal([b.id, a.id]);
    await chat({ threadId: a.id, text: 'again' });
    expect((await list()).map((t) => t.id)).to.deep.equal([a.id, b.id]);
  });

  it('downloads a thread as its serialized JSON and loads it back as a thread that remembers', async () => {
    const saved = done(await chat({ agent: 'assistant', text: 'My name is Bob' }));
    const download = await fx.fetch(`/api/threads/${saved.id}/json`);
    expect(download.headers.get('content-disposition')).to.match(/^attachment; filename="skein-thread-assistant-.*\.json"$/);
    const serialized = (await download.json()) as { $type: string; provider: string; agent: string };
    expect(serialized).to.include({ $type: 'in-memory', provider: 'openai-chat', agent: 'assistant' });

    const imported = await json<{ thread: Summary }>('/api/threads/import', { method: 'POST', body: JSON.stringify({ serialized }) });
    expect(imported.status).to.equal(201);
    expect(imported.body.thread.id).to.not.equal(saved.id);
    expect(imported.body.thread).to.include({ agent: 'assistant', title: 'My name is Bob' });
    const reply = await chat({ threadId: imported.body.thread.id, text: "What's my name?" });
    expect(textOf(reply)).to.equal('Your name is Bob.');
  });

  it('rejects a tampered or foreign thread file with a typed error and keeps the index as it was', async () => {
    done(await chat({ agent: 'assistant', text: 'hello' }));
    const bad = await json<{ error: { name: string; message: string } }>('/api/threads/import', {
      method: 'POST',
      body: JSON.stringify({ agent: 'assistant', serialized: { $type: 'no-such-store', version: 1, provider: 'openai-chat' } }),
    });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.name).to.equal('SerializationError');
    expect(bad.body.error.message).to.contain('no-such-store');
    const foreign = await json<{ error: { name: string } }>('/api/threads/import', {
      method: 'POST',
      body: JSON.stringify({ agent: 'assistant', serialized: { $type: 'service', version: 1, provider: 'openai-responses', agent: 'responses', serviceThreadId: 'resp_1' } }),
    });
    expect(foreign.status).to.equal(400);
    expect(foreign.body.error.name).to.equal('ThreadCompatibilityError');
    const notJson = await fx.fetch('/api/threads/import', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"serial' });
    expect(notJson.status).to.equal(400);
    expect(await list()).to.have.length(1);
  });

  it('keeps service threads by id with a transcript, and deletes them on the service only when confirmed', async () => {
    const first = done(await chat({ agent: 'responses', text: 'My name is Carol' }));
    expect(first.kind).to.equal('service');
    expect(first.serviceThreadId).to.be.a('string');
    const second = await chat({ threadId: first.id, text: "What's my name?" });
    expect(textOf(second)).to.equal('Your name is Carol.');
    const { body } = await thread(first.id);
    expect(body.history).to.equal('transcript');
    expect(body.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);

    const unconfirmed = await json<{ error: { message: string } }>(`/api/threads/${first.id}`, { method: 'DELETE' });
    expect(unconfirmed.status).to.equal(409);
    expect(unconfirmed.body.error.message).to.contain('confirm');
    expect(fx.emulator.requests.filter((r) => r.method === 'DELETE')).to.have.length(0);

    const current = (await thread(first.id)).body.thread; // the service thread id moves with each Responses turn
    const confirmed = await json<{ deleted: boolean; service: boolean; historyKept: boolean; deletion: string }>(`/api/threads/${first.id}?confirm=1`, { method: 'DELETE' });
    expect(confirmed.body).to.include({ deleted: true, service: true, historyKept: false });
    expect(confirmed.body.deletion).to.equal(
      `Deletes "My name is Carol": service thread ${current.serviceThreadId} (openai-responses) is kept by the service and will be deleted there too, then removed from the Dev UI.`,
    );
    expect(fx.emulator.requests.filter((r) => r.method === 'DELETE').length).to.be.greaterThan(0);
    expect(await list()).to.have.length(0);
    expect((await thread(first.id)).status).to.equal(404);
  });

  it('deletes a message-store thread from the index directory', async () => {
    const saved = done(await chat({ agent: 'assistant', text: 'to be deleted' }));
    expect(await readdir(fx.threadsDir)).to.deep.equal([`${saved.id}.json`]);
    const deleted = await json<{ deleted: boolean }>(`/api/threads/${saved.id}?confirm=1`, { method: 'DELETE' });
    expect(deleted.body.deleted).to.equal(true);
    expect(await readdir(fx.threadsDir)).to.deep.equal([]);
  });

  it('stop aborts the run (the service sees the stream closed) and the thread stays unchanged', async () => {
    const saved = done(await chat({ agent: 'assistant', text: 'My name is Dan' }));
    const before = (await thread(saved.id)).body.messages;
    fx.emulator.injectFault({ kind: 'stall-stream', afterEvents: 2, path: '/v1/chat/completions' });
    let runId: unknown;
    let stopAnswer: unknown;
    const events = await chat({ threadId: saved.id, text: 'a long answer please' }, async (e) => {
      if (e.event === 'run') runId = e.data.runId;
      if (e.event === 'delta' && stopAnswer === undefined) {
        stopAnswer = (await json(`/api/runs/${String(runId)}/stop`, { method: 'POST' })).body;
      }
    });
    expect(stopAnswer).to.deep.equal({ stopped: true });
    expect(events.at(-1)!.event).to.equal('stopped');
    await fx.emulator.waitForAbortedStream();
    expect((await thread(saved.id)).body.messages).to.deep.equal(before);
  });

  it('a browser that goes away mid-reply aborts the run too, and nothing is saved', async () => {
    fx.emulator.injectFault({ kind: 'stall-stream', afterEvents: 2, path: '/v1/chat/completions' });
    const controller = new AbortController();
    const response = await fx.fetch('/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'assistant', text: 'never finishes' }),
      signal: controller.signal,
    });
    await readSse(response, (e) => {
      if (e.event === 'delta') controller.abort();
    }).catch(() => undefined);
    await fx.emulator.waitForAbortedStream();
    expect(await list()).to.deep.equal([]);
  });

  it('reports a service error readably as an SSE error and saves nothing', async () => {
    const saved = done(await chat({ agent: 'assistant', text: 'My name is Eve' }));
    const before = (await thread(saved.id)).body.messages;
    fx.emulator.injectFault({ kind: 'status', status: 500, times: 3, retryAfterSeconds: 0, message: 'The emulated service broke.' });
    const events = await chat({ threadId: saved.id, text: 'hello?' });
    const error = events.at(-1)!;
    expect(error.event).to.equal('error');
    expect(error.data).to.include({ status: 500 });
    expect(error.data.name).to.match(/Error$/);
    expect(error.data.message).to.contain('The emulated service broke.');
    expect((await thread(saved.id)).body.messages).to.deep.equal(before);
  });

  it('answers bad requests with typed JSON errors', async () => {
    const unknownAgent = await json<{ error: { message: string } }>('/api/chat', { method: 'POST', body: JSON.stringify({ agent: 'nope', text: 'hi' }) });
    expect(unknownAgent.status).to.equal(400);
    expect(unknownAgent.body.error.message).to.contain('configured agents: assistant, responses');
    const empty = await json('/api/chat', { method: 'POST', body: JSON.stringify({ agent: 'assistant', text: '  ' }) });
    expect(empty.status).to.equal(400);
    const missing = await json('/api/threads/00000000-0000-0000-0000-000000000000', {});
    expect(missing.status).to.equal(404);
    const traversal = await json('/api/threads/..%2F..%2Fetc%2Fpasswd', {});
    expect(traversal.status).to.equal(404);
    const crossSite = await json('/api/threads', { headers: { origin: 'http://evil.example' } });
    expect(crossSite.status).to.equal(403);
  });
});
