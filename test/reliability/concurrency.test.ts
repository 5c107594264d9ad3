import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';
import { type AIAgent, type AgentThread, ThreadBusyError } from 'skein';
import { ALL_PROVIDERS, harnessPerTest, rejection } from './providers.js';

type Mode = 'run' | 'runStream';

async function turn(agent: AIAgent, mode: Mode, input: string, thread: AgentThread): Promise<string> {
  if (mode === 'run') return (await agent.run(input, { thread })).text;
  const updates = await lastValueFrom(agent.runStream(input, { thread }).pipe(toArray()));
  return updates.filter((u) => u.role === 'assistant').map((u) => u.text).join('');
}

describe('reliability: per-thread run concurrency', () => {
  const ctx = harnessPerTest();

  for (const provider of ALL_PROVIDERS) {
    for (const mode of ['run', 'runStream'] as const) {
      describe(`${provider.id} ${mode}`, () => {
        it('queues a second run on a busy thread: it starts after the first turn landed and sees it', async () => {
          ctx.harness = await provider.create(ctx.emulator);
          const { agent } = ctx.harness;
          const thread = agent.getNewThread();
          await turn(agent, mode, 'Hello.', thread);
          // The first run's model call is slow, so the second is started while it is in flight.
          ctx.emulator.injectFault({ kind: 'latency', ms: 150, ...ctx.harness.modelCall(thread) });
          const first = turn(agent, mode, 'My name is Ada.', thread);
          const second = turn(agent, mode, "What's my name?", thread);
          expect(await first).to.equal('Nice to meet you, Ada!');
          expect(await second).to.equal('Your name is Ada.');
          if (thread.messageStore) {
            const texts = (await thread.messageStore.listMessages()).map((m) => `${m.role}: ${m.contents.map((c) => (c.kind === 'text' ? c.text : c.kind)).join('')}`);
            expect(texts.slice(2)).to.deep.equal(['user: My name is Ada.', 'assistant: Nice to meet you, Ada!', "user: What's my name?", 'assistant: Your name is Ada.']);
          }
          await ctx.harness.assertWellFormed(thread);
        });

        it('with concurrency "reject", a second run on a busy thread fails with ThreadBusyError and changes nothing', async () => {
          ctx.harness = await provider.create(ctx.emulator, { concurrency: 'reject' });
          const { agent } = ctx.harness;
          const thread = agent.getNewThread();
          await turn(agent, mode, 'Hello.', thread);
          ctx.emulator.injectFault({ kind: 'latency', ms: 100, ...ctx.harness.modelCall(thread) });
          const first = turn(agent, mode, 'My name is Ada.', thread);
          const error = await rejection(turn(agent, mode, 'My name is Bob.', thread));
          expect(error).to.be.instanceOf(ThreadBusyError);
          expect(await first).to.equal('Nice to meet you, Ada!');
          // The rejected run sent nothing: the thread remembers Ada, not Bob.
          expect(await turn(agent, mode, "What's my name?", thread)).to.equal('Your name is Ada.');
          await ctx.harness.assertWellFormed(thread);
        });
      });
    }
  }
});
