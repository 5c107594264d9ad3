import 'reflect-metadata';
import { SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';
import { ContainerModule } from 'inversify';
import { lastValueFrom, toArray } from 'rxjs';
import {
  AgentRunMiddleware,
  type AgentRunResponseUpdate,
  type AgentThread,
  type SkeinPlugin,
  agentToken,
  createContainer,
} from 'skein';
import { A2AAgent, A2ARunResponse, a2aPlugin, partsText } from 'skein/a2a';
import { telemetryMiddleware, telemetryPlugin } from 'skein/telemetry';
import { ScriptedExecutor, startSdkServer } from './remote-fixtures.js';
import { forbiddenGuard, redactKeys } from '../support/example-middleware.js';

function logger(order: string[], name: string): AgentRunMiddleware {
  return {
    async onRun(context, next) {
      order.push(`${name}:before${context.streaming ? ' (stream)' : ''}`);
      const response = await next();
      order.push(`${name}:after`);
      return response;
    },
  };
}



describe('A2AAgent middleware (against the A2A SDK server)', () => {
  let executor: ScriptedExecutor;
  let remoteServer: Awaited<ReturnType<typeof startSdkServer>>;
  /** What the remote agent received, one entry per message it was sent. */
  let received: string[];

  beforeEach(async () => {
    executor = new ScriptedExecutor();
    received = [];
    const execute = executor.execute;
    executor.execute = (request, bus) => {
      received.push(partsText(request.userMessage.parts));
      return execute(request, bus);
    };
    remoteServer = await startSdkServer(executor);
  });
  afterEach(async () => {
    await remoteServer.close();
  });

  const agentWith = (agentRun: AgentRunMiddleware[]) => new A2AAgent({ url: remoteServer.cardUrl, name: 'scripted', middleware: { agentRun } });
  const turn = async (mode: 'run' | 'runStream', agent: A2AAgent, input: string, thread: AgentThread): Promise<string> =>
    mode === 'run' ? (await agent.run(input, { thread })).text : (await lastValueFrom(agent.runStream(input, { thread }).pipe(toArray()))).map((u) => u.text).join('');

  for (const mode of ['run', 'runStream'] as const) {
    it(`${mode}: run middleware wraps each turn in registration order`, async () => {
      const order: string[] = [];
      const agent = agentWith([logger(order, 'outer'), logger(order, 'inner')]);
      expect(await turn(mode, agent, 'hello', agent.getNewThread())).to.equal('echo: hello');
      const s = mode === 'runStream' ? ' (stream)' : '';
      expect(order).to.deep.equal([`outer:before${s}`, `inner:before${s}`, 'inner:after', 'outer:after']);
    });

    it(`${mode}: a run middleware that changes the input changes what the remote agent receives`, async () => {
      const agent = agentWith([redactKeys]);
      const reply = await turn(mode, agent, 'my key is sk-abcdefghijklmnop keep it', agent.getNewThread());
      expect(received).to.deep.equal(['my key is [REDACTED] keep it']);
      expect(reply).to.equal('echo: my key is [REDACTED] keep it');
    });

    it(`${mode}: a short-circuit sends nothing; the thread keeps its context id and open task`, async () => {
      const agent = agentWith([forbiddenGuard]);
      const fresh = agent.getNewThread();
      if (mode === 'run') {
        expect((await agent.run('something forbidden', { thread: fresh })).text).to.equal('I cannot help with that.');
      } else {
        const updates: AgentRunResponseUpdate[] = await lastValueFrom(agent.runStream('something forbidden', { thread: fresh }).pipe(toArray()));
        expect(updates).to.deep.equal([{ text: 'I cannot help with that.', contents: [{ kind: 'text', text: 'I cannot help with that.' }], role: 'assistant', authorName: 'scripted' }]);
      }
      expect(received).to.deep.equal([]);
      expect(fresh.serviceThreadId).to.equal(undefined);

      // Blocked while the remote waits for an answer: the open task is still answered next turn.
      const thread = agent.getNewThread();
      const question = (await agent.run("What's the weather?", { thread })) as A2ARunResponse;
      expect(question.inputRequired).to.equal(true);
      const before = JSON.parse(JSON.stringify(await thread.serialize())) as unknown;
      expect(await turn(mode, agent, 'forbidden city', thread)).to.equal('I cannot help with that.');
      expect(JSON.parse(JSON.stringify(await thread.serialize()))).to.deep.equal(before);
      expect((await agent.run('Paris', { thread })).text).to.equal('Weather in Paris: sunny');
      expect(executor.continuations.map((c) => c.text)).to.deep.equal(['Paris']);
      expect(received).to.deep.equal(["What's the weather?", 'Paris']);
    });
  }

  it('a container applies its agent-run middleware contributions, in binding order, to a2a agents', async () => {
    const order: string[] = [];
    const policy: SkeinPlugin = {
      id: 'policy',
      module: new ContainerModule(({ bind }) => {
        bind(AgentRunMiddleware).toConstantValue(logger(order, 'first'));
        bind(AgentRunMiddleware).toConstantValue(forbiddenGuard);
        bind(AgentRunMiddleware).toConstantValue(logger(order, 'never'));
      }),
    };
    const container = createContainer({ plugins: [policy, a2aPlugin()], agents: { remote: { client: 'a2a', url: remoteServer.cardUrl } } });
    const agent = container.get(agentToken('remote'));
    expect((await agent.run('forbidden')).text).to.equal('I cannot help with that.');
    expect(order).to.deep.equal(['first:before', 'first:after']);
    expect((await agent.run('hello')).text).to.equal('echo: hello');
    expect(order).to.deep.equal(['first:before', 'first:after', 'first:before', 'never:before', 'never:after', 'first:after']);
  });

  it('telemetryPlugin records an invoke_agent span per turn for an a2a agent, with the context id', async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const container = createContainer({
      plugins: [telemetryPlugin({ tracerProvider }), a2aPlugin({ headers: { authorization: 'Bearer a2a-secret-77' } })],
      agents: { remote: { client: 'a2a', url: remoteServer.cardUrl } },
    });
    const agent = container.get(agentToken('remote'));
    const thread = agent.getNewThread();
    await agent.run('hello', { thread });
    await lastValueFrom(agent.runStream('again', { thread }).pipe(toArray()));
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).to.deep.equal(['invoke_agent remote', 'invoke_agent remote']);
    for (const span of spans) {
      expect(span.attributes).to.deep.include({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.provider.name': 'a2a',
        'gen_ai.agent.name': 'remote',
        'gen_ai.conversation.id': thread.serviceThreadId,
      });
    }
    const dump = JSON.stringify(spans.map((s) => s.attributes));
    expect(dump).to.not.contain('gen_ai.input.messages');
    expect(dump).to.not.contain('a2a-secret-77');
    await tracerProvider.shutdown();
  });

  it('takes telemetryMiddleware() directly; a failed turn gives an ERROR span', async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const agent = new A2AAgent({ url: remoteServer.cardUrl, name: 'scripted', middleware: telemetryMiddleware({ tracerProvider }) });
    await agent.run('please reject this').catch(() => undefined);
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).to.equal('invoke_agent scripted');
    expect(span!.attributes['error.type']).to.equal('A2ATaskRejectedError');
    expect(span!.status.code).to.equal(SpanStatusCode.ERROR);
    await tracerProvider.shutdown();
  });
});
