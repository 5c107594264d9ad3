import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tableBookings } from '../../samples/devui/devui-tools-plugin.js';
import { readSse, startFixture, type DevUIFixture, type SseEvent } from './devui-fixture.js';

const TOOLS_PLUGIN = fileURLToPath(new URL('../../samples/devui/devui-tools-plugin.js', import.meta.url));

/** Issue 28 §2: a chat in the Dev UI with an openai-assistants agent asks before a tool that needs approval. */
describe('Dev UI chat: approvals with an openai-assistants agent (HTTP API)', () => {
  let fx: DevUIFixture;
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'skein-devui-asst-'));
    const config = path.join(dir, 'skein.yaml');
    await writeFile(
      config,
      [
        'plugins:',
        '  openai: { apiKey: test, baseURL: "${OPENAI_BASE_URL}", maxRetries: 0 }',
        `  devui-tools: { module: ${JSON.stringify(TOOLS_PLUGIN)}, export: devuiToolsPlugin }`,
        'agents:',
        '  ops: { client: openai-assistants, model: gpt-4.1-mini, tools: [book_table], polling: { intervalMs: 1 } }',
        '',
      ].join('\n'),
    );
    fx = await startFixture({ config });
  });
  afterEach(async () => {
    await fx.close();
    await rm(dir, { recursive: true, force: true });
  });

  const chat = async (body: Record<string, unknown>): Promise<SseEvent[]> => readSse(await fx.fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
  const textOf = (events: SseEvent[]) => events.filter((e) => e.event === 'delta').map((e) => e.data.text).join('');
  const restaurant = (label: string) => `${label} ${Math.random().toString(36).slice(2, 8)}`;
  const bookingsAt = (name: string) => tableBookings().filter((b) => b.restaurant === name);
  const askToBook = async (name: string) => {
    const events = await chat({ agent: 'ops', text: `call book_table ${JSON.stringify({ restaurant: name, time: '19:30', people: 2 })}` });
    const request = events.find((e) => e.event === 'approval-request')?.data as { callId: string; name: string } | undefined;
    expect(request, JSON.stringify(events.map((e) => e.event))).to.include({ name: 'book_table' });
    expect(events.some((e) => e.event === 'tool-result')).to.equal(false);
    expect(bookingsAt(name)).to.deep.equal([]);
    return { request: request!, threadId: (events.find((e) => e.event === 'done')!.data.thread as { id: string }).id };
  };

  it('asks first; approved, the tool runs exactly once and the answer uses its result; a second answer is refused', async () => {
    const name = restaurant('Chez Asst');
    const { request, threadId } = await askToBook(name);
    const events = await chat({ threadId, approvals: [{ callId: request.callId, approved: true }] });
    expect(bookingsAt(name)).to.have.length(1);
    expect(events.find((e) => e.event === 'tool-result')!.data).to.deep.include({ callId: request.callId });
    expect(textOf(events)).to.contain('book_table returned:').and.contain(bookingsAt(name)[0]!.bookingId);
    const again = await fx.fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ threadId, approvals: [{ callId: request.callId, approved: true }] }) });
    expect(again.status).to.equal(409);
    expect(bookingsAt(name)).to.have.length(1);

    // A fork (its view is the service thread's history) shows the settled call and its result, not the note the new run read.
    const forkReply = await fx.fetch(`/api/threads/${threadId}/fork`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ at: 3 }) });
    expect(forkReply.status).to.equal(201);
    const forked = ((await forkReply.json()) as { thread: { id: string } }).thread;
    const view = (await (await fx.fetch(`/api/threads/${forked.id}`)).json()) as { messages: { role: string; contents: { kind: string; text?: string; name?: string; callId?: string }[] }[] };
    expect(view.messages.map((m) => [m.role, m.contents.map((c) => c.kind).join(',')])).to.deep.equal([
      ['user', 'text'],
      ['assistant', 'function-call'],
      ['tool', 'function-result'],
      ['assistant', 'text'],
    ]);
    expect(view.messages[1]!.contents[0]).to.include({ name: 'book_table', callId: request.callId });
    expect(view.messages[2]!.contents[0]).to.include({ callId: request.callId });
    expect(JSON.stringify(view.messages)).to.not.contain('[tool results]');
  });

  it('rejected, the tool never runs', async () => {
    const name = restaurant('Chez Non');
    const { request, threadId } = await askToBook(name);
    const events = await chat({ threadId, approvals: [{ callId: request.callId, approved: false, reason: 'full' }] });
    expect(bookingsAt(name)).to.deep.equal([]);
    expect(textOf(events)).to.contain('rejected this call: full');
  });
});
