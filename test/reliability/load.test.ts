import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';
import { type AgentThread, type ChatMessage, SkeinError, AbortError } from 'skein';
import { type ProviderCase, a2a, harnessPerTest, assertMessagesWellFormed, openaiChat, openaiResponses, openaiResponsesStateless } from './providers.js';

const text = (m: ChatMessage) => m.contents.map((c) => (c.kind === 'text' ? c.text : '')).join('');

/** A deterministic pseudo-random sequence, so a failing soak run can be replayed. */
function random(seed: number): () => number {
  let x = seed;
  return () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

describe('reliability: load', function () {
  this.timeout(60_000);
  const ctx = harnessPerTest();

  const CONVERSATIONS = 40;
  for (const provider of [openaiChat, openaiResponses, openaiResponsesStateless, a2a] as ProviderCase[]) {
    it(`${provider.id}: ${CONVERSATIONS} concurrent conversations on one agent, run and runStream mixed, no cross-talk`, async () => {
      ctx.harness = await provider.create(ctx.emulator);
      const { agent } = ctx.harness;
      const threads = Array.from({ length: CONVERSATIONS }, () => agent.getNewThread());
      const say = (i: number, input: string) =>
        i % 2 === 0
          ? agent.run(input, { thread: threads[i] }).then((r) => r.text)
          : lastValueFrom(agent.runStream(input, { thread: threads[i] }).pipe(toArray())).then((u) => u.filter((x) => x.role === 'assistant').map((x) => x.text).join(''));
      // Both turns of every conversation are in flight together; per-thread queueing orders them.
      const answers = await Promise.all(threads.map((_, i) => Promise.all([say(i, `My name is User${i}.`), say(i, "What's my name?")])));
      answers.forEach(([hello, name], i) => {
        expect(hello).to.equal(`Nice to meet you, User${i}!`);
        expect(name).to.equal(`Your name is User${i}.`);
      });
      for (const thread of threads) await ctx.harness.assertWellFormed(thread);
    });
  }

  it('openai-chat: a flood of 60 runs on one thread lands in submission order, each once', async () => {
    ctx.harness = await openaiChat.create(ctx.emulator);
    const { agent } = ctx.harness;
    const thread = agent.getNewThread();
    const runs = Array.from({ length: 60 }, (_, i) => agent.run(`message ${i}`, { thread }));
    await Promise.all(runs);
    const messages = await thread.messageStore!.listMessages();
    expect(messages).to.have.length(120);
    expect(messages.filter((m) => m.role === 'user').map(text)).to.deep.equal(Array.from({ length: 60 }, (_, i) => `message ${i}`));
    // The model saw each turn after the previous one: turn i answered with 2*i earlier messages.
    messages.filter((m) => m.role === 'assistant').forEach((m, i) => expect(text(m)).to.contain(`I have seen ${2 * i} earlier messages`));
    assertMessagesWellFormed(messages);
  });

  it('soak: 30 conversations x 4 turns under random faults; every thread holds exactly its acknowledged turns', async () => {
    ctx.harness = await openaiChat.create(ctx.emulator, { maxRetries: 0 });
    const { agent } = ctx.harness;
    const next = random(20240601);
    const kinds = ['status-500', 'status-429', 'cut-stream', 'garbage-json', 'malformed-sse'] as const;
    const threads: AgentThread[] = Array.from({ length: 30 }, () => agent.getNewThread());
    const acknowledged = threads.map(() => [] as string[]);
    await Promise.all(
      threads.map(async (thread, t) => {
        for (let turn = 0; turn < 4; turn++) {
          if (next() < 0.35) {
            const kind = kinds[Math.floor(next() * kinds.length)]!;
            if (kind === 'status-500') ctx.emulator.injectFault({ kind: 'status', status: 500 });
            else if (kind === 'status-429') ctx.emulator.injectFault({ kind: 'status', status: 429, retryAfterSeconds: 0 });
            else if (kind === 'cut-stream') ctx.emulator.injectFault({ kind: 'cut-stream', afterEvents: 2 });
            else ctx.emulator.injectFault({ kind });
          }
          const input = `conversation ${t} turn ${turn}`;
          const streamed = next() < 0.5;
          try {
            if (streamed) await lastValueFrom(agent.runStream(input, { thread }).pipe(toArray()));
            else await agent.run(input, { thread });
            acknowledged[t]!.push(input);
          } catch (error) {
            expect(error).to.be.instanceOf(SkeinError);
            expect(error).to.not.be.instanceOf(AbortError);
          }
        }
      }),
    );
    ctx.emulator.clearFaults();
    let failures = 0;
    for (const [t, thread] of threads.entries()) {
      const messages = thread.messageStore ? await thread.messageStore.listMessages() : [];
      assertMessagesWellFormed(messages, `thread ${t}`);
      expect(messages.filter((m) => m.role === 'user').map(text), `thread ${t}`).to.deep.equal(acknowledged[t]);
      expect(messages).to.have.length(acknowledged[t]!.length * 2);
      failures += 4 - acknowledged[t]!.length;
    }
    // The faults did hit: some turns failed, most landed.
    expect(failures).to.be.greaterThan(0);
    expect(failures).to.be.lessThan(120);
  });
});
