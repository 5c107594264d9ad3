import { expect } from 'chai';
import { AbortError, type AIAgent, type AgentThread, type ChatMessage, ConfigurationError, ConnectionError, SkeinError, agentToken, createContainer, messageText, tool } from 'skein';
import { openaiPlugin } from 'skein/openai';
import { z } from 'zod';
import { assertMessagesWellFormed, harnessPerTest, openaiChat, openaiResponses, openaiResponsesStateless, rejection, snapshot, streamTurn, until } from './providers.js';

async function messagesOf(thread: AgentThread): Promise<ChatMessage[]> {
  return thread.messageStore!.listMessages();
}

const isPartial = (m: ChatMessage) => m.additionalProperties?.partial === true;

describe('reliability: keepPartial keeps the assistant text of a failed run, marked partial', function () {
  this.timeout(20_000);
  const ctx = harnessPerTest();

  for (const provider of [openaiChat, openaiResponsesStateless]) {
    describe(provider.id, () => {
      // SSE events up to and including the first two words of the answer ("Nice to "): the
      // Responses stream opens with four events before its first text delta.
      const twoWords = provider === openaiChat ? 3 : 6;
      /** A thread holding one landed turn, and the model call path for faults. */
      async function started(tools: Parameters<typeof provider.create>[1] = {}) {
        ctx.harness = await provider.create(ctx.emulator, tools);
        const thread = ctx.harness.agent.getNewThread();
        expect((await ctx.harness.agent.run('My name is Ada.', { thread })).text).to.equal('Nice to meet you, Ada!');
        return { agent: ctx.harness.agent, thread, call: ctx.harness.modelCall(thread), before: await messagesOf(thread) };
      }

      it('runStream aborted mid-stream: AbortError carrying the partial message; the thread holds the input and that text, marked partial', async () => {
        const { agent, thread, call, before } = await started();
        ctx.emulator.injectFault({ kind: 'stall-stream', afterEvents: twoWords, ...call });
        const controller = new AbortController();
        let streamed = '';
        const error = await rejection(
          streamTurn(agent, 'My name is Bob.', { thread, signal: controller.signal, keepPartial: true }, (text) => {
            streamed += text;
            controller.abort();
          }),
        );
        expect(error).to.be.instanceOf(AbortError);
        expect(streamed).to.not.equal('');
        await until(() => !thread.busy);
        const after = await messagesOf(thread);
        expect(after.slice(0, before.length)).to.deep.equal(before);
        const added = after.slice(before.length);
        expect(added.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
        expect(messageText(added[0]!)).to.equal('My name is Bob.');
        expect(isPartial(added[1]!)).to.equal(true);
        // What was kept is a prefix of the real answer, at least what the subscriber saw.
        expect('Nice to meet you, Bob!'.startsWith(messageText(added[1]!))).to.equal(true);
        expect(messageText(added[1]!).startsWith(streamed)).to.equal(true);
        expect((error as SkeinError).partial).to.deep.equal(added[1]);
        assertMessagesWellFormed(after);
        // The thread goes on; the model sees the kept input.
        expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Bob.');
      });

      it('runStream cut mid-stream: ConnectionError carrying the partial message, which the thread recorded', async () => {
        const { agent, thread, call, before } = await started();
        ctx.emulator.injectFault({ kind: 'cut-stream', afterEvents: twoWords, ...call });
        let streamed = '';
        const error = await rejection(streamTurn(agent, 'My name is Bob.', { thread, keepPartial: true }, (text) => (streamed += text)));
        expect(error).to.be.instanceOf(ConnectionError);
        expect(streamed).to.not.equal('');
        const added = (await messagesOf(thread)).slice(before.length);
        expect(added.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
        expect(messageText(added[1]!)).to.equal(streamed).and.to.equal('Nice to ');
        expect(isPartial(added[1]!)).to.equal(true);
        expect((error as SkeinError).partial).to.deep.equal(added[1]);
        assertMessagesWellFormed(await messagesOf(thread));
      });

      it('nothing arrived (run cut before its reply, abort before the first token): the thread is unchanged, no partial', async () => {
        const { agent, thread, call } = await started();
        const before = await snapshot(thread);
        ctx.emulator.injectFault({ kind: 'cut-stream', afterEvents: 0, ...call });
        const cut = await rejection(agent.run('My name is Bob.', { thread, keepPartial: true }));
        expect(cut).to.be.instanceOf(ConnectionError);
        expect((cut as SkeinError).partial).to.equal(undefined);
        ctx.emulator.injectFault({ kind: 'stall-stream', afterEvents: 0, ...call });
        const controller = new AbortController();
        const sent = ctx.emulator.requests.length;
        const pending = streamTurn(agent, 'My name is Bob.', { thread, signal: controller.signal, keepPartial: true });
        await until(() => ctx.emulator.requests.length > sent);
        controller.abort();
        expect(await rejection(pending)).to.be.instanceOf(AbortError);
        await until(() => !thread.busy);
        expect(await snapshot(thread)).to.equal(before);
      });

      it('aborted after a tool round: the answered call stays with its result, the unfinished call is dropped, the text is kept', async () => {
        let executed = 0;
        const lookup = tool({
          name: 'lookup_city',
          description: 'Looks a city up',
          parameters: z.object({}),
          execute: () => {
            executed++;
            // The model call after this tool round streams some text, then stalls.
            ctx.emulator.injectFault({ kind: 'stall-stream', afterEvents: twoWords, ...ctx.harness!.modelCall(thread) });
            return 'Paris';
          },
        });
        ctx.harness = await provider.create(ctx.emulator, { tools: [lookup] });
        const thread = ctx.harness.agent.getNewThread();
        const controller = new AbortController();
        const error = await rejection(
          streamTurn(ctx.harness.agent, 'call lookup_city {}', { thread, signal: controller.signal, keepPartial: true }, () => controller.abort()),
        );
        expect(error).to.be.instanceOf(AbortError);
        expect(executed).to.equal(1);
        await until(() => !thread.busy);
        const kept = await messagesOf(thread);
        expect(kept.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
        expect(kept[1]!.contents.some((c) => c.kind === 'function-call')).to.equal(true);
        expect(isPartial(kept[3]!)).to.equal(true);
        expect(messageText(kept[3]!)).to.not.equal('');
        assertMessagesWellFormed(kept);
      });

      it('aborted during a tool call before any text: the unanswered call is dropped and nothing is kept', async () => {
        let waiting = false;
        const { agent, thread } = await started({
          tools: [
            tool({
              name: 'wait_for_abort',
              parameters: z.object({}),
              execute: (_a, { signal }) =>
                new Promise<string>((_r, reject) => {
                  waiting = true;
                  signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
                }),
            }),
          ],
        });
        const before = await snapshot(thread);
        const controller = new AbortController();
        const pending = agent.run('call wait_for_abort {}', { thread, signal: controller.signal, keepPartial: true });
        await until(() => waiting);
        controller.abort();
        const error = await rejection(pending);
        expect(error).to.be.instanceOf(AbortError);
        expect((error as SkeinError).partial).to.equal(undefined);
        expect(await snapshot(thread)).to.equal(before);
      });
    });
  }

  it('agent config `keepPartial: true` is the default for its runs; a run can turn it off', async () => {
    const container = await createContainer({
      plugins: [openaiPlugin({ apiKey: 'test', baseURL: ctx.emulator.openaiBaseURL, maxRetries: 0 })],
      agents: { support: { client: 'openai-chat', model: 'gpt-test', keepPartial: true } },
    });
    const agent = container.get<AIAgent>(agentToken('support'));
    const thread = agent.getNewThread();
    ctx.emulator.injectFault({ kind: 'cut-stream', afterEvents: 4, path: '/v1/chat/completions' });
    const error = await rejection(streamTurn(agent, 'My name is Bob.', { thread }));
    expect((error as SkeinError).partial?.additionalProperties).to.deep.equal({ partial: true });
    expect(await messagesOf(thread)).to.have.length(2);
    const before = await snapshot(thread);
    ctx.emulator.injectFault({ kind: 'cut-stream', afterEvents: 4, path: '/v1/chat/completions' });
    const off = await rejection(streamTurn(agent, 'My name is Cy.', { thread, keepPartial: false }));
    expect(off).to.be.instanceOf(ConnectionError);
    expect((off as SkeinError).partial).to.equal(undefined);
    expect(await snapshot(thread)).to.equal(before);
  });

  it('a bad `keepPartial` in agent config is a ConfigurationError naming the field', async () => {
    const error = await rejection(
      (async () =>
        createContainer({
          plugins: [openaiPlugin({ apiKey: 'test', baseURL: ctx.emulator.openaiBaseURL })],
          agents: { support: { client: 'openai-chat', keepPartial: 'yes' as unknown as boolean } },
        }))(),
    );
    expect(error).to.be.instanceOf(ConfigurationError);
    expect((error as Error).message).to.include('agents.support.keepPartial');
  });

  it('openai-responses (service thread): the service decides; nothing changes locally even with keepPartial', async () => {
    ctx.harness = await openaiResponses.create(ctx.emulator);
    const { agent } = ctx.harness;
    const thread = agent.getNewThread();
    await agent.run('My name is Ada.', { thread });
    const before = await snapshot(thread);
    ctx.emulator.injectFault({ kind: 'cut-stream', afterEvents: 6, ...ctx.harness.modelCall(thread) });
    let streamed = '';
    const error = await rejection(streamTurn(agent, 'My name is Bob.', { thread, keepPartial: true }, (t) => (streamed += t)));
    expect(error).to.be.instanceOf(ConnectionError);
    expect(streamed).to.not.equal('');
    expect((error as SkeinError).partial).to.equal(undefined);
    expect(thread.messageStore).to.equal(undefined);
    expect(await snapshot(thread)).to.equal(before);
    expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Ada.');
  });
});
