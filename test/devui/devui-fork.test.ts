import { expect } from 'chai';
import { RESPONSES_INPUT_ITEMS_LISTINGS } from 'skein/testing';
import { readSse, startFixture, type DevUIFixture } from './devui-fixture.js';

interface Summary {
  id: string;
  title: string;
  storeKey?: string;
}
interface View {
  messages: { role: string; contents: { text?: string }[] }[];
}

describe('Dev UI: fork a thread from a message (HTTP API)', () => {
  let fx: DevUIFixture;
  beforeEach(async () => {
    fx = await startFixture({ config: 'sqlite' });
  });
  afterEach(async () => {
    await fx.close();
  });

  const turn = async (text: string, threadId?: string) => {
    const response = await fx.fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'assistant', text, threadId }) });
    return (readSse(response).then((events) => events.find((e) => e.event === 'done')!.data.thread as Summary));
  };
  const view = async (id: string) => (await (await fx.fetch(`/api/threads/${id}`)).json()) as View;
  const fork = (id: string, body: unknown) => fx.fetch(`/api/threads/${id}/fork`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('a fork holds the history up to that message in a new store key, continues on its own, and leaves the original whole', async () => {
    const original = await turn('My name is Ann');
    await turn('My name is Bea', original.id);
    const response = await fork(original.id, { at: 1 });
    expect(response.status).to.equal(201);
    const forked = ((await response.json()) as { thread: Summary }).thread;
    expect(forked.title).to.equal('My name is Ann (fork at message 2)');
    expect(forked.storeKey).to.be.a('string').and.not.equal(original.storeKey);
    expect((await view(forked.id)).messages.map((m) => m.contents[0]!.text)).to.deep.equal(['My name is Ann', 'Nice to meet you, Ann!']);

    await turn("What's my name?", forked.id);
    expect((await view(forked.id)).messages.at(-1)!.contents[0]!.text).to.equal('Your name is Ann.');
    await turn("What's my name?", original.id);
    expect((await view(original.id)).messages.at(-1)!.contents[0]!.text).to.equal('Your name is Bea.');
    expect((await view(original.id)).messages).to.have.length(6);
  });

  it('a position the thread does not have is a 400 that says what exists, and adds nothing', async () => {
    const original = await turn('hello');
    for (const [at, message] of [
      [9, /Expected `at` to be a message index from 0 to 1 \(the thread holds 2 messages\), found 9/],
      [-1, /"at" must be the index of a message/],
      ['x', /"at" must be the index of a message/],
    ] as const) {
      const response = await fork(original.id, { at });
      expect(response.status, String(at)).to.equal(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).to.match(message);
    }
    expect(await fx.devui.threads.list()).to.have.length(1);
    expect((await fork('nope', { at: 0 })).status).to.equal(404);
  });
});

// The service keeps a Responses thread's history; the Dev UI shows a fork as the service reads it.
// Both ways a server lists a continuing response's input_items.
for (const listing of RESPONSES_INPUT_ITEMS_LISTINGS) describe(`Dev UI: fork a Responses chain thread (HTTP API; input_items: ${listing})`, () => {
  let fx: DevUIFixture;
  beforeEach(async () => {
    fx = await startFixture({ config: 'sqlite', responsesInputItems: listing });
  });
  afterEach(async () => {
    await fx.close();
  });

  const turn = async (text: string, threadId?: string) => {
    const response = await fx.fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'responses', text, threadId }) });
    return readSse(response).then((events) => events.find((e) => e.event === 'done')!.data.thread as Summary);
  };
  const view = async (id: string) => ((await (await fx.fetch(`/api/threads/${id}`)).json()) as View).messages.map((m) => m.contents[0]!.text);
  const fork = async (id: string, at: number) => {
    const response = await fx.fetch(`/api/threads/${id}/fork`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ at }) });
    expect(response.status, `fork at ${at}`).to.equal(201);
    return ((await response.json()) as { thread: Summary }).thread;
  };

  it('a fork at an answer holds each message up to it once, and continues from there', async () => {
    const original = await turn('My name is Ann');
    await turn('My name is Bea', original.id);
    const early = await fork(original.id, 1);
    expect(await view(early.id)).to.deep.equal(['My name is Ann', 'Nice to meet you, Ann!']);
    const late = await fork(original.id, 3);
    expect(await view(late.id)).to.deep.equal(['My name is Ann', 'Nice to meet you, Ann!', 'My name is Bea', 'Nice to meet you, Bea!']);
    await turn("What's my name?", early.id);
    expect((await view(early.id)).at(-1)).to.equal('Your name is Ann.');
    await turn("What's my name?", late.id);
    expect((await view(late.id)).at(-1)).to.equal('Your name is Bea.');
  });
});
