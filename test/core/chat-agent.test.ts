import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { ChatAgent, ThreadBusyError, runFunctionLoop, tool, type ChatResponse } from 'skein';
import { FakeChatClient } from 'skein/testing';

const callReply = (callId: string, name: string, args: string): ChatResponse => ({
  messages: [{ role: 'assistant', contents: [{ kind: 'function-call', callId, name, arguments: args }] }],
});

describe('ChatAgent (unit, FakeChatClient)', () => {
  const echo = tool({ name: 'echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => text });

  it('appends the input and every response message once, in order', async () => {
    const client = new FakeChatClient().reply(callReply('c1', 'echo', '{"text":"x"}')).reply('done');
    const agent = new ChatAgent({ chatClient: client, name: 'Bot', tools: [echo] });
    const thread = agent.getNewThread();
    const r = await agent.run('go', { thread });
    const stored = await thread.messageStore!.listMessages();
    expect(stored.map((m) => [m.role, m.contents[0]!.kind])).to.deep.equal([
      ['user', 'text'],
      ['assistant', 'function-call'],
      ['tool', 'function-result'],
      ['assistant', 'text'],
    ]);
    expect(r.messages).to.deep.equal(stored.slice(1));
    expect(stored.filter((m) => m.role === 'assistant').every((m) => m.authorName === 'Bot')).to.equal(true);
  });

  it('leaves the thread untouched when a run fails after a tool already ran', async () => {
    const client = new FakeChatClient().reply('first').reply(callReply('c1', 'echo', '{"text":"x"}')).reply(new Error('service down'));
    const agent = new ChatAgent({ chatClient: client, tools: [echo] });
    const thread = agent.getNewThread();
    await agent.run('one', { thread });
    const before = JSON.stringify(await thread.serialize());
    await agent.run('two', { thread }).then(
      () => expect.fail('expected failure'),
      (e: Error) => expect(e.message).to.equal('service down'),
    );
    expect(JSON.stringify(await thread.serialize())).to.equal(before);
  });

  it('sends history, instructions and merged options to the client', async () => {
    const client = new FakeChatClient().reply('a').reply('b');
    const agent = new ChatAgent({ chatClient: client, instructions: 'Be brief', chatOptions: { model: 'm1', temperature: 0.5 } });
    const thread = agent.getNewThread();
    await agent.run('one', { thread });
    await agent.run('two', { thread, chatOptions: { temperature: 0.1 } });
    const call = client.calls[1]!;
    expect(call.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user']);
    expect(call.options).to.include({ instructions: 'Be brief', model: 'm1', temperature: 0.1 });
  });

  it('queues concurrent runs on one thread so turns never interleave', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const client = new FakeChatClient()
      .reply(async () => {
        await gate;
        return { messages: [{ role: 'assistant', contents: [{ kind: 'text', text: 'first' }] }] };
      })
      .reply('second');
    const agent = new ChatAgent({ chatClient: client });
    const thread = agent.getNewThread();
    const a = agent.run('one', { thread });
    const b = agent.run('two', { thread });
    await new Promise((r) => setImmediate(r));
    expect(client.calls).to.have.length(1);
    release();
    await Promise.all([a, b]);
    const texts = (await thread.messageStore!.listMessages()).map((m) => (m.contents[0] as { text: string }).text);
    expect(texts).to.deep.equal(['one', 'first', 'two', 'second']);
    expect(client.calls[1]!.messages).to.have.length(3);
  });

  it('rejects a concurrent run with ThreadBusyError under the reject policy', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const client = new FakeChatClient().reply(async () => {
      await gate;
      return { messages: [] };
    });
    const agent = new ChatAgent({ chatClient: client, concurrency: 'reject' });
    const thread = agent.getNewThread();
    const first = agent.run('one', { thread });
    await agent.run('two', { thread }).then(
      () => expect.fail('expected ThreadBusyError'),
      (e: Error) => expect(e).to.be.instanceOf(ThreadBusyError),
    );
    release();
    await first;
    expect(await thread.messageStore!.listMessages()).to.have.length(1);
  });

  it('answers a call to an unknown tool with an error result', async () => {
    const client = new FakeChatClient().reply(callReply('c9', 'nope', '{}')).reply('ok');
    const agent = new ChatAgent({ chatClient: client, tools: [echo] });
    const r = await agent.run('x');
    const result = r.messages[1]!.contents[0];
    expect(result).to.deep.include({ kind: 'function-result', callId: 'c9' });
    expect((result as { error: string }).error).to.contain('unknown tool "nope"').and.to.contain('echo');
  });

  it('streams through the same loop and stores the same turn as run', async () => {
    const client = new FakeChatClient().reply(callReply('c1', 'echo', '{"text":"hi"}')).reply('said hi');
    const agent = new ChatAgent({ chatClient: client, name: 'Bot', tools: [echo] });
    const thread = agent.getNewThread();
    const updates = await lastValueFrom(agent.runStream('go', { thread }).pipe(toArray()));
    expect(updates.map((u) => u.role)).to.deep.equal(['assistant', 'tool', 'assistant']);
    expect(updates[2]!.authorName).to.equal('Bot');
    expect((await thread.messageStore!.listMessages()).map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
  });

  it('a model call that throws at once (first round or after tools) fails the run as a rejection, the thread untouched and released', async () => {
    for (const round of [0, 1]) {
      let calls = 0;
      const agent = new ChatAgent({
        chatClient: new FakeChatClient(),
        tools: [echo],
      });
      // A chat client whose call throws instead of returning a rejected promise.
      (agent.chatClient as FakeChatClient).getResponse = () => {
        if (calls++ === round) throw new Error(`thrown in round ${round}`);
        return Promise.resolve(callReply('c1', 'echo', '{"text":"x"}'));
      };
      const thread = agent.getNewThread();
      const pending = agent.run('go', { thread });
      expect(pending).to.be.instanceOf(Promise);
      await pending.then(
        () => expect.fail('expected failure'),
        (e: Error) => expect(e.message).to.equal(`thrown in round ${round}`),
      );
      expect(await thread.messageStore!.listMessages()).to.deep.equal([]);
      // Released: the next run on the thread gets through.
      (agent.chatClient as FakeChatClient).getResponse = () => Promise.resolve({ messages: [{ role: 'assistant', contents: [{ kind: 'text', text: 'ok' }] }] });
      expect((await agent.run('again', { thread })).text).to.equal('ok');
    }
  });

  it('runFunctionLoop returns a rejected promise, never throws, when the run is already aborted or the model call throws', async () => {
    const aborted = runFunctionLoop({
      callModel: () => Promise.reject(new Error('not called')),
      history: [],
      input: [{ role: 'user', contents: [{ kind: 'text', text: 'x' }] }],
      options: {},
      serviceManaged: false,
      tools: new Map(),
      maxIterations: 3,
      signal: { aborted: true, reason: 'stop' },
    });
    await aborted.then(
      () => expect.fail('expected an AbortError'),
      (e: Error) => expect(e.name).to.equal('AbortError'),
    );
    const thrown = runFunctionLoop({
      callModel: () => {
        throw new TypeError('bad call');
      },
      history: [],
      input: [],
      options: {},
      serviceManaged: true,
      tools: new Map(),
      maxIterations: 3,
    });
    await thrown.then(
      () => expect.fail('expected the error'),
      (e: Error) => expect(e).to.be.instanceOf(TypeError),
    );
  });

  it('requires a chat client', () => {
    expect(() => new ChatAgent(undefined as never)).to.throw(TypeError, /needs a chatClient/);
  });
});
