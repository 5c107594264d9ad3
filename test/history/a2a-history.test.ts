import { expect } from 'chai';
import { ForkUnsupportedError, HistoryUnavailableError, messageText } from 'skein';
import { A2AAgent } from 'skein/a2a';
import { ScriptedExecutor, startSdkServer } from '../a2a/remote-fixtures.js';

describe('history: A2A threads (real @a2a-js/sdk client and server)', () => {
  let server: Awaited<ReturnType<typeof startSdkServer>>;
  before(async () => {
    server = await startSdkServer(new ScriptedExecutor(), { streaming: false });
  });
  after(() => server.close());

  const agent = () => new A2AAgent({ url: server.cardUrl, name: 'remote', mode: 'poll', pollIntervalMs: 10 });

  it('getMessages reads the task history the remote returns, oldest first', async () => {
    const a = agent();
    const thread = a.getNewThread();
    const first = await a.run('weather please', { thread });
    expect(first.text).to.contain('Which city?');
    await a.run('Oslo', { thread });
    const messages = await a.getMessages(thread);
    const texts = messages.map((m) => `${m.role}:${messageText(m)}`);
    expect(texts[0]).to.equal('user:weather please');
    expect(texts).to.include('assistant:Which city?');
    expect(texts).to.include('user:Oslo');
    expect(texts.at(-1)).to.contain('Weather in Oslo: sunny');
    expect(texts.indexOf('user:Oslo')).to.be.greaterThan(texts.indexOf('assistant:Which city?'));
    expect(await a.getMessages(thread, { limit: 1 })).to.have.length(1);
  });

  it('says the history is not available (HistoryUnavailableError) when the remote answered with messages only', async () => {
    const a = agent();
    const thread = a.getNewThread();
    expect((await a.run('hello', { thread })).text).to.equal('echo: hello');
    const error = await a.getMessages(thread).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(HistoryUnavailableError);
    expect((error as Error).message).to.contain(thread.serviceThreadId!);
  });

  it('reads an unstarted thread as empty, and refuses to fork with ForkUnsupportedError (the remote owns the context)', async () => {
    const a = agent();
    const thread = a.getNewThread();
    expect(await a.getMessages(thread)).to.deep.equal([]);
    await a.run('weather please', { thread });
    const before = JSON.stringify(await thread.serialize());
    const error = await a.forkThread(thread).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ForkUnsupportedError);
    expect((error as Error).message).to.contain('cannot be forked');
    expect(JSON.stringify(await thread.serialize())).to.equal(before);
  });
});
