import { expect } from 'chai';
import { lastValueFrom } from 'rxjs';
import { z } from 'zod';
import { AbortError, ChatAgent, type ChatResponseUpdate, responseFromUpdates, tool } from 'skein';
import { FakeChatClient } from 'skein/testing';

const callReply = (callId: string) => ({
  messages: [{ role: 'assistant' as const, contents: [{ kind: 'function-call' as const, callId, name: 'wait', arguments: '{}' }] }],
});

/** A tool that waits until its signal aborts, reporting the signal it got. */
function waitingTool() {
  let seen!: (signal: AbortSignal) => void;
  const started = new Promise<AbortSignal>((resolve) => (seen = resolve));
  const wait = tool({
    name: 'wait',
    parameters: z.object({}),
    execute: (_args, { signal }) =>
      new Promise<string>((_resolve, reject) => {
        seen(signal);
        signal.addEventListener('abort', () => reject(new Error('tool aborted')), { once: true });
      }),
  });
  return { wait, started };
}

describe('runStream abort and thread bookkeeping (unit, FakeChatClient)', () => {
  it('unsubscribing while a tool runs aborts the signal the tool got; the thread is unchanged and free', async () => {
    const { wait, started } = waitingTool();
    const client = new FakeChatClient().reply('hello').reply(callReply('c1')).reply('after');
    const agent = new ChatAgent({ chatClient: client, tools: [wait] });
    const thread = agent.getNewThread();
    await agent.run('first', { thread });
    const before = JSON.stringify(await thread.serialize());

    const subscription = agent.runStream('use the tool', { thread }).subscribe({ error: () => {} });
    const signal = await started;
    expect(signal.aborted).to.equal(false);
    subscription.unsubscribe();
    expect(signal.aborted).to.equal(true);
    expect(signal.reason).to.be.instanceOf(AbortError);

    // The aborted turn unwinds, releases the thread and records nothing.
    const next = await agent.run('again', { thread });
    expect(next.text).to.equal('after');
    const stored = await thread.messageStore!.listMessages();
    expect(JSON.stringify(stored.slice(0, 2))).to.equal(JSON.stringify(JSON.parse(before).store.messages));
    expect(stored.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
  });

  it("the caller's signal aborting during a tool ends runStream with an AbortError and aborts the tool", async () => {
    const { wait, started } = waitingTool();
    const client = new FakeChatClient().reply(callReply('c1'));
    const agent = new ChatAgent({ chatClient: client, tools: [wait] });
    const thread = agent.getNewThread();
    const controller = new AbortController();
    const result = lastValueFrom(agent.runStream('go', { thread, signal: controller.signal }));
    const signal = await started;
    controller.abort();
    expect(signal.aborted).to.equal(true);
    await result.then(
      () => expect.fail('expected AbortError'),
      (error: Error) => expect(error).to.be.instanceOf(AbortError),
    );
    expect(await thread.messageStore!.listMessages()).to.have.length(0);
    expect(thread.busy).to.equal(false);
  });

  it('a run whose model call is cancelled before it starts never calls the model', async () => {
    const client = new FakeChatClient().reply('never');
    const agent = new ChatAgent({ chatClient: client });
    const controller = new AbortController();
    controller.abort();
    await lastValueFrom(agent.runStream('go', { signal: controller.signal })).then(
      () => expect.fail('expected AbortError'),
      (error: Error) => expect(error).to.be.instanceOf(AbortError),
    );
    expect(client.calls).to.have.length(0);
  });

  it('queued runs on one thread take it in arrival order and leave it free', async () => {
    const gates: (() => void)[] = [];
    const client = new FakeChatClient();
    for (const text of ['a', 'b', 'c']) {
      client.reply(async () => {
        await new Promise<void>((resolve) => gates.push(resolve));
        return { messages: [{ role: 'assistant', contents: [{ kind: 'text', text }] }] };
      });
    }
    const agent = new ChatAgent({ chatClient: client });
    const thread = agent.getNewThread();
    const runs = ['one', 'two', 'three'].map((input) => agent.run(input, { thread }));
    for (let i = 0; i < 3; i++) {
      while (gates.length <= i) await new Promise((resolve) => setImmediate(resolve));
      expect(thread.busy).to.equal(true);
      gates[i]!();
    }
    await Promise.all(runs);
    expect(thread.busy).to.equal(false);
    const texts = (await thread.messageStore!.listMessages()).map((m) => (m.contents[0] as { text: string }).text);
    expect(texts).to.deep.equal(['one', 'a', 'two', 'b', 'three', 'c']);
  });

  it('a streamed turn stores one joined text message; the updates handed out keep their own deltas', async () => {
    const reply = {
      messages: [
        {
          role: 'assistant' as const,
          messageId: 'm1',
          contents: [
            { kind: 'text' as const, text: 'Hel' },
            { kind: 'text' as const, text: 'lo, ' },
            { kind: 'text' as const, text: 'world' },
          ],
        },
      ],
      usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
    };
    const agent = new ChatAgent({ chatClient: new FakeChatClient().reply(reply), name: 'Bot' });
    const thread = agent.getNewThread();
    const deltas: string[] = [];
    await new Promise<void>((resolve, reject) =>
      agent.runStream('hi', { thread }).subscribe({ next: (u) => deltas.push(u.text), error: reject, complete: resolve }),
    );
    expect(deltas.filter(Boolean)).to.deep.equal(['Hel', 'lo, ', 'world']);
    const [, stored] = await thread.messageStore!.listMessages();
    const { createdAt, ...rest } = stored!;
    expect(rest).to.deep.equal({ role: 'assistant', contents: [{ kind: 'text', text: 'Hello, world' }], messageId: 'm1', authorName: 'Bot' });
    expect(Date.parse(createdAt ?? '')).to.be.closeTo(Date.now(), 60_000);
    // Same key order as before (the serialized JSON is unchanged).
    expect(Object.keys(stored!)).to.deep.equal(['role', 'contents', 'messageId', 'createdAt', 'authorName']);
    expect(reply.messages[0]!.contents.map((c) => c.text)).to.deep.equal(['Hel', 'lo, ', 'world']);
  });

  it('responseFromUpdates joins adjacent text per message and sums usage, leaving the updates untouched', () => {
    const updates: ChatResponseUpdate[] = [
      { role: 'assistant', messageId: 'a', contents: [{ kind: 'text', text: 'x' }] },
      { role: 'assistant', messageId: 'a', contents: [{ kind: 'text', text: 'y' }, { kind: 'usage', usage: { inputTokens: 1 } }] },
      { contents: [{ kind: 'usage', usage: { inputTokens: 2, outputTokens: 1 } }] },
      { role: 'assistant', messageId: 'a', contents: [{ kind: 'function-call', callId: 'c', name: 'f', arguments: '{}' }] },
      { role: 'assistant', messageId: 'a', contents: [{ kind: 'text', text: 'z' }] },
      { role: 'assistant', messageId: 'b', contents: [{ kind: 'text', text: 'n' }], finishReason: 'stop' },
    ];
    const copy = JSON.parse(JSON.stringify(updates)) as ChatResponseUpdate[];
    const response = responseFromUpdates(updates);
    expect(response.messages).to.deep.equal([
      {
        role: 'assistant',
        messageId: 'a',
        contents: [
          { kind: 'text', text: 'xy' },
          { kind: 'function-call', callId: 'c', name: 'f', arguments: '{}' },
          { kind: 'text', text: 'z' },
        ],
      },
      { role: 'assistant', messageId: 'b', contents: [{ kind: 'text', text: 'n' }] },
    ]);
    expect(response.usage).to.deep.include({ inputTokens: 3, outputTokens: 1 });
    expect(response.finishReason).to.equal('stop');
    expect(updates).to.deep.equal(copy);
  });
});
