import { expect } from 'chai';
import { readSse, startFixture, type DevUIFixture } from './devui-fixture.js';

interface Summary {
  id: string;
  agent: string;
  title: string;
  match?: { in: string; excerpt?: string };
}

describe('Dev UI: finding threads (search, agent filter, rename) over HTTP', () => {
  let fx: DevUIFixture;
  beforeEach(async () => {
    fx = await startFixture({ config: 'sqlite' });
  });
  afterEach(async () => {
    await fx.close();
  });

  const turn = async (agent: string, text: string, threadId?: string) => {
    const response = await fx.fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent, text, threadId }) });
    const events = await readSse(response);
    return (events.find((e) => e.event === 'done')!.data.thread as Summary).id;
  };
  const list = async (query = '') => {
    const response = await fx.fetch(`/api/threads${query}`);
    return { status: response.status, body: (await response.json()) as { threads: Summary[]; error?: { message: string } } };
  };
  const titles = async (query: string) => (await list(query)).body.threads.map((t) => t.title);

  it('searches titles and message contents (a SQLite store and a service transcript), all words, any case', async () => {
    const pasta = await turn('assistant', 'Plans for dinner');
    await turn('assistant', 'I would like fresh Pasta with basil', pasta);
    await turn('responses', 'My name is Quentin');
    await turn('assistant', 'Unrelated chat');

    expect(await titles('?q=dinner')).to.deep.equal(['Plans for dinner']);
    const byContent = (await list('?q=PASTA%20basil')).body.threads;
    expect(byContent.map((t) => t.title)).to.deep.equal(['Plans for dinner']);
    expect(byContent[0]!.match!.in).to.equal('messages');
    expect(byContent[0]!.match!.excerpt).to.contain('fresh Pasta with basil');
    // A service thread is searched through the Dev UI's transcript (the reply included).
    expect(await titles('?q=nice%20to%20meet%20you')).to.deep.equal(['My name is Quentin']);
    expect(await titles('?q=pasta%20quentin')).to.deep.equal([]);
    expect(await titles('?q=')).to.have.length(3);
  });

  it('filters by agent, alone or with a search; an unknown agent is a 400 naming the configured ones', async () => {
    await turn('assistant', 'hello from chat');
    await turn('responses', 'hello from responses');
    expect(await titles('?agent=responses')).to.deep.equal(['hello from responses']);
    expect(await titles('?agent=assistant&q=hello')).to.deep.equal(['hello from chat']);
    const bad = await list('?agent=ghost');
    expect(bad.status).to.equal(400);
    expect(bad.body.error!.message).to.equal('Unknown agent "ghost" in ?agent=; configured agents: assistant, responses.');
  });

  it('renames a thread (its history untouched, still searchable by the new title); a bad title is a 400 and changes nothing', async () => {
    const id = await turn('assistant', 'My name is Uma');
    const patch = (body: unknown) => fx.fetch(`/api/threads/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const renamed = await patch({ title: '  Uma   intro ' });
    expect(renamed.status).to.equal(200);
    expect(((await renamed.json()) as { thread: Summary }).thread.title).to.equal('Uma intro');
    expect(await titles('?q=intro')).to.deep.equal(['Uma intro']);
    for (const body of [{ title: '' }, { title: 7 }, { title: 'x'.repeat(201) }, {}]) {
      const response = await patch(body);
      expect(response.status, JSON.stringify(body).slice(0, 40)).to.equal(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).to.match(/^"title" must be a non-empty string of at most 200 characters/);
    }
    expect(await titles('')).to.deep.equal(['Uma intro']);
    // The conversation goes on with its memory.
    await turn('assistant', "What's my name?", id);
    const view = (await (await fx.fetch(`/api/threads/${id}`)).json()) as { messages: { contents: { text?: string }[] }[] };
    expect(view.messages.at(-1)!.contents[0]!.text).to.equal('Your name is Uma.');
    expect((await fx.fetch('/api/threads/nope', { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"title":"x"}' })).status).to.equal(404);
  });
});
