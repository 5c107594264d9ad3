import { expect } from 'chai';
import sinon from 'sinon';
import { AbortError, type AgentThread, RateLimitError, ServiceError, SkeinError, tool } from 'skein';
import type { Fault } from 'skein/testing';
import { z } from 'zod';
import { ALL_PROVIDERS, harnessPerTest, rejection, snapshot, turn, until } from './providers.js';

/** A tool that runs until its run is aborted: the abort reaches the tool through its signal. */
function waitingTool() {
  const seen = { started: 0, aborted: 0 };
  const wait = tool({
    name: 'wait_for_abort',
    description: 'Waits until the run is aborted',
    parameters: z.object({}),
    execute: (_args, { signal }) =>
      new Promise<string>((_resolve, reject) => {
        seen.started++;
        const onAbort = () => {
          seen.aborted++;
          reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }),
  });
  return { wait, seen };
}

describe('reliability: abort and failure policy', function () {
  this.timeout(20_000);
  afterEach(() => sinon.restore());
  const ctx = harnessPerTest();

  for (const provider of ALL_PROVIDERS) {
    for (const mode of ['run', 'runStream'] as const) {
      describe(`${provider.id} ${mode}`, () => {
        let waiting: ReturnType<typeof waitingTool>;

        /** A harness and a thread holding one landed turn ("My name is Ada."). */
        async function started(options: Parameters<typeof provider.create>[1] = {}) {
          waiting = waitingTool();
          ctx.harness = await provider.create(ctx.emulator, { tools: [waiting.wait], ...options });
          const thread = ctx.harness.agent.getNewThread();
          expect(await turn(ctx.harness.agent, mode, 'My name is Ada.', thread)).to.equal('Nice to meet you, Ada!');
          return { agent: ctx.harness.agent, thread, before: await snapshot(thread) };
        }

        const modelRequests = (thread: AgentThread) => {
          const call = ctx.harness!.modelCall(thread);
          return ctx.emulator.requests.filter((r) => r.path === call.path && r.method === call.method).length;
        };

        /**
         * The failed run left the thread as it was, the conversation is well formed and goes on.
         * `runCreated`: the fault struck after the service accepted the run (a lost or aborted
         * reply); only then may a service thread keep the failed turn's input.
         */
        async function expectUnchangedAndUsable(thread: AgentThread, before: string, runCreated = false) {
          await until(() => !thread.busy);
          expect(await snapshot(thread)).to.equal(before);
          ctx.emulator.clearFaults();
          const answer = await turn(ctx.harness!.agent, mode, "What's my name?", thread);
          if (provider.serviceMayKeepFailedInput && runCreated) expect(answer).to.be.oneOf(['Your name is Ada.', 'Your name is Bob.']);
          else expect(answer).to.equal('Your name is Ada.');
          await ctx.harness!.assertWellFormed(thread);
        }

        function inject(thread: AgentThread, fault: Fault) {
          ctx.emulator.injectFault({ ...fault, ...ctx.harness!.modelCall(thread) } as Fault);
        }

        it('abort before the run starts: AbortError, nothing sent, thread unchanged', async () => {
          const { agent, thread, before } = await started();
          const sent = modelRequests(thread);
          const error = await rejection(turn(agent, mode, 'My name is Bob.', thread, AbortSignal.abort()));
          expect(error).to.be.instanceOf(AbortError);
          expect(modelRequests(thread)).to.equal(sent);
          await expectUnchangedAndUsable(thread, before);
        });

        it('abort after the request went out, before the first token: AbortError, thread unchanged', async () => {
          const { agent, thread, before } = await started();
          const sent = modelRequests(thread);
          inject(thread, mode === 'run' ? { kind: 'latency', ms: 2_000 } : { kind: 'stall-stream', afterEvents: 0 });
          const controller = new AbortController();
          const pending = turn(agent, mode, 'My name is Bob.', thread, controller.signal);
          await until(() => modelRequests(thread) > sent);
          controller.abort();
          expect(await rejection(pending)).to.be.instanceOf(AbortError);
          await expectUnchangedAndUsable(thread, before, true);
        });

        if (mode === 'runStream') {
          it('abort mid-stream, after text arrived: AbortError, no partial text kept, thread unchanged', async () => {
            const { agent, thread, before } = await started();
            inject(thread, { kind: 'stall-stream', afterEvents: 12 });
            const controller = new AbortController();
            const texts: string[] = [];
            const pending = turn(agent, mode, 'My name is Bob.', thread, controller.signal, (text) => {
              texts.push(text);
              controller.abort();
            });
            expect(await rejection(pending)).to.be.instanceOf(AbortError);
            expect(texts.join('')).to.not.equal('');
            await expectUnchangedAndUsable(thread, before, true);
          });
        }

        it('abort during a tool call: the tool sees the abort, AbortError, no dangling tool call', async () => {
          const { agent, thread, before } = await started();
          const controller = new AbortController();
          const pending = turn(agent, mode, 'call wait_for_abort {}', thread, controller.signal);
          await until(() => waiting.seen.started > 0);
          controller.abort();
          expect(await rejection(pending)).to.be.instanceOf(AbortError);
          await until(() => waiting.seen.aborted > 0);
          await expectUnchangedAndUsable(thread, before, true);
        });

        it('HTTP 429 with retry-after, then success: the SDK waits as told and the turn lands once', async () => {
          const { agent, thread } = await started({ maxRetries: 2 });
          const timers = sinon.spy(globalThis, 'setTimeout');
          const sent = modelRequests(thread);
          inject(thread, { kind: 'status', status: 429, retryAfterSeconds: 1 });
          expect(await turn(agent, mode, "What's my name?", thread)).to.equal('Your name is Ada.');
          expect(modelRequests(thread) - sent).to.equal(2);
          expect(timers.getCalls().some((c) => c.args[1] === 1000), 'a 1000 ms wait from retry-after').to.equal(true);
          if (thread.messageStore) expect(await thread.messageStore.listMessages()).to.have.length(4);
          // Landed once: the next turn still sees exactly one exchange about the name.
          await ctx.harness!.assertWellFormed(thread);
        });

        it('HTTP 429 until the retries run out: a typed rate-limit failure, thread unchanged', async () => {
          const { agent, thread, before } = await started({ maxRetries: 1 });
          const sent = modelRequests(thread);
          inject(thread, { kind: 'status', status: 429, retryAfterSeconds: 0, times: 2 });
          const error = await rejection(turn(agent, mode, 'My name is Bob.', thread));
          expect(modelRequests(thread) - sent).to.equal(2);
          if (provider.id === 'a2a') {
            // The remote agent's failure arrives as a failed task; its message names the cause.
            expect(error).to.be.instanceOf(SkeinError);
            expect((error as Error).message).to.match(/429|rate/i);
          } else {
            expect(error).to.be.instanceOf(RateLimitError);
            expect((error as RateLimitError).status).to.equal(429);
          }
          await expectUnchangedAndUsable(thread, before);
        });

        it('HTTP 500 once is retried and lands; HTTP 503 past maxRetries is a ServiceError, thread unchanged', async () => {
          const { agent, thread, before } = await started({ maxRetries: 1 });
          inject(thread, { kind: 'status', status: 500, retryAfterSeconds: 0 });
          expect(await turn(agent, mode, "What's my name?", thread)).to.equal('Your name is Ada.');
          const afterRetry = await snapshot(thread);
          if (provider.history === 'message-store') expect(afterRetry).to.not.equal(before);
          inject(thread, { kind: 'status', status: 503, retryAfterSeconds: 0, times: 2 });
          const error = await rejection(turn(agent, mode, 'My name is Bob.', thread));
          expect(error).to.be.instanceOf(SkeinError);
          if (provider.id !== 'a2a') expect((error as ServiceError).status).to.equal(503);
          await expectUnchangedAndUsable(thread, afterRetry);
        });

        if (provider.sdkTimeout) {
          it('SDK timeout against a slow reply: a typed failure, thread unchanged', async () => {
            // Generous against a loaded machine: the normal turns must finish well inside the timeout.
            const { agent, thread, before } = await started({ timeoutMs: 1_000 });
            inject(thread, { kind: 'latency', ms: 5_000 });
            const error = await rejection(turn(agent, mode, 'My name is Bob.', thread));
            expect(error).to.be.instanceOf(SkeinError);
            expect(error).to.not.be.instanceOf(AbortError);
            expect((error as Error).message).to.match(/time|abort/i);
            // The slow reply still creates the run after the client gave up.
            await expectUnchangedAndUsable(thread, before, true);
          });
        }

        const broken: [string, Fault][] = [
          ['a connection cut mid-stream', { kind: 'cut-stream', afterEvents: 3 }],
          ['malformed SSE', { kind: 'malformed-sse' }],
          ['garbage JSON', { kind: 'garbage-json' }],
        ];
        for (const [what, fault] of broken) {
          it(`${what}: a typed failure, thread unchanged`, async () => {
            const { agent, thread, before } = await started();
            inject(thread, fault);
            const outcome = await turn(agent, mode, 'My name is Bob.', thread).then(
              (text) => ({ text }),
              (error: unknown) => ({ error }),
            );
            if ('text' in outcome) {
              // The SDK got past the fault (e.g. skipped one unparsable event): the turn landed whole.
              expect(outcome.text).to.equal('Nice to meet you, Bob!');
              expect(await snapshot(thread)).to.not.equal(provider.history === 'message-store' ? before : '');
              await ctx.harness!.assertWellFormed(thread);
              return;
            }
            expect(outcome.error).to.be.instanceOf(SkeinError);
            expect(outcome.error).to.not.be.instanceOf(AbortError);
            // Garbage JSON replaces the reply before the run exists; stream faults break the reply of a created run.
            await expectUnchangedAndUsable(thread, before, fault.kind !== 'garbage-json');
          });
        }
      });
    }
  }
});
