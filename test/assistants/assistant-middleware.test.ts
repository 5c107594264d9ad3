import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';
import { ContainerModule } from 'inversify';
import OpenAI from 'openai';
import { lastValueFrom, toArray } from 'rxjs';
import {
  AgentRunMiddleware,
  type AgentRunResponseUpdate,
  type AITool,
  FunctionCallMiddleware,
  type SkeinPlugin,
  agentToken,
  createContainer,
  tool,
} from 'skein';
import { OpenAIAssistantAgent, openaiPlugin } from 'skein/openai';
import { telemetryPlugin } from 'skein/telemetry';
import { emulatorPerTest } from '../support/emulator.js';
import { z } from 'zod';
import { forbiddenGuard, redactKeys } from '../support/example-middleware.js';

const weather = tool({
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `sunny in ${city}`,
});

/** Records the order in which run and tool middleware are entered and left. */
function recorder(order: string[]) {
  const run = (name: string): AgentRunMiddleware => ({
    async onRun(context, next) {
      order.push(`${name}:before${context.streaming ? ' (stream)' : ''}`);
      const response = await next();
      order.push(`${name}:after`);
      return response;
    },
  });
  const call = (name: string): FunctionCallMiddleware => ({
    async onFunctionCall(context, next) {
      order.push(`${name}:${context.call.name}`);
      return next();
    },
  });
  return { run, call };
}



describe('OpenAIAssistantAgent middleware (real openai SDK against the emulator)', () => {
  let client: OpenAI;

  const running = emulatorPerTest();
  beforeEach(() => {
    client = new OpenAI({ apiKey: 'test', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 });
  });

  const create = (middleware: ConstructorParameters<typeof OpenAIAssistantAgent>[0]['middleware'], tools: AITool[] = [weather]) =>
    OpenAIAssistantAgent.create(client, { model: 'gpt-test', name: 'helper' }, { tools, polling: { intervalMs: 1 }, middleware });
  const stream = (agent: OpenAIAssistantAgent, input: string, thread = agent.getNewThread()): Promise<AgentRunResponseUpdate[]> =>
    lastValueFrom(agent.runStream(input, { thread }).pipe(toArray()));
  const serviceTexts = async (threadId: string) => (await client.beta.threads.messages.list(threadId, { order: 'asc' })).data.map((m) => (m.content[0]?.type === 'text' ? m.content[0].text.value : ''));

  for (const mode of ['run', 'runStream'] as const) {
    it(`${mode}: run middleware wraps the turn in registration order, tool middleware each tool call inside it`, async () => {
      const order: string[] = [];
      const { run, call } = recorder(order);
      const agent = await create({ agentRun: [run('outer'), run('inner')], functionCall: [call('first'), call('second')] });
      const thread = agent.getNewThread();
      const text =
        mode === 'run'
          ? (await agent.run('call get_weather {"city":"Oslo"}', { thread })).text
          : (await stream(agent, 'call get_weather {"city":"Oslo"}', thread)).map((u) => u.text).join('');
      expect(text).to.equal('get_weather returned: sunny in Oslo');
      const s = mode === 'runStream' ? ' (stream)' : '';
      expect(order).to.deep.equal([`outer:before${s}`, `inner:before${s}`, 'first:get_weather', 'second:get_weather', 'inner:after', 'outer:after']);
    });

    it(`${mode}: a run middleware that changes the input changes what reaches the service thread`, async () => {
      const agent = await create({ agentRun: [redactKeys] });
      const thread = agent.getNewThread();
      const input = 'my key is sk-abcdefghijklmnop keep it';
      const text = mode === 'run' ? (await agent.run(input, { thread })).text : (await stream(agent, input, thread)).map((u) => u.text).join('');
      const sent = JSON.stringify(running.emulator.requests.filter((r) => r.method === 'POST').map((r) => r.body));
      expect(sent).to.not.contain('sk-abcdefghijklmnop');
      expect(sent).to.contain('my key is [REDACTED] keep it');
      expect(text).to.contain('[REDACTED]');
      expect(await serviceTexts(thread.serviceThreadId!)).to.deep.equal(['my key is [REDACTED] keep it', text]);
    });

    it(`${mode}: a run middleware can short-circuit; the service records nothing and the thread is unchanged`, async () => {
      const agent = await create({ agentRun: [forbiddenGuard] });
      const thread = agent.getNewThread();
      const before = running.emulator.requests.length;
      if (mode === 'run') {
        expect((await agent.run('something forbidden', { thread })).text).to.equal('I cannot help with that.');
      } else {
        const updates = await stream(agent, 'something forbidden', thread);
        // The middleware's answer is streamed, authored by the agent like any reply.
        expect(updates).to.deep.equal([{ text: 'I cannot help with that.', contents: [{ kind: 'text', text: 'I cannot help with that.' }], role: 'assistant', authorName: 'helper' }]);
      }
      expect(running.emulator.requests.length, 'no call reached the service').to.equal(before);
      expect(thread.serviceThreadId, 'no service thread was created').to.equal(undefined);

      // On a started thread, the blocked turn leaves no trace in the service's history.
      const greeting = (await agent.run('My name is Ada.', { thread })).text;
      const id = thread.serviceThreadId;
      if (mode === 'run') await agent.run('forbidden again', { thread });
      else await stream(agent, 'forbidden again', thread);
      expect(thread.serviceThreadId).to.equal(id);
      expect(await serviceTexts(id!)).to.deep.equal(['My name is Ada.', greeting]);
      expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Ada.');
    });

    it(`${mode}: a function-call middleware blocks a tool call; the assistant gets the refusal, the tool never runs`, async () => {
      let ran = 0;
      const transfer = tool({ name: 'transfer_money', parameters: z.object({ amount: z.number() }), execute: ({ amount }) => ((ran += 1), `sent ${amount}`) });
      const limit: FunctionCallMiddleware = {
        async onFunctionCall(context, next) {
          const { amount } = JSON.parse(context.call.arguments) as { amount: number };
          if (amount > 100) return { kind: 'function-result', callId: context.call.callId, error: 'blocked by policy: amount over 100' };
          return next();
        },
      };
      const agent = await create({ functionCall: [limit] }, [transfer]);
      const go = async (input: string) => (mode === 'run' ? (await agent.run(input, { thread: agent.getNewThread() })).text : (await stream(agent, input)).map((u) => u.text).join(''));
      expect(await go('call transfer_money {"amount": 5000}')).to.contain('blocked by policy: amount over 100');
      expect(ran).to.equal(0);
      const submitted = running.emulator.requests.filter((r) => r.path.endsWith('/submit_tool_outputs')).at(-1)!.body as { tool_outputs: { output: string }[] };
      expect(submitted.tool_outputs.map((o) => o.output)).to.deep.equal(['Error: blocked by policy: amount over 100']);
      expect(await go('call transfer_money {"amount": 5}')).to.contain('sent 5');
      expect(ran).to.equal(1);
    });
  }

  it('a container applies its middleware contributions, in binding order, to openai-assistants agents', async () => {
    const order: string[] = [];
    const { run, call } = recorder(order);
    const policy: SkeinPlugin = {
      id: 'policy',
      module: new ContainerModule(({ bind }) => {
        bind(AgentRunMiddleware).toConstantValue(run('first'));
        bind(AgentRunMiddleware).toConstantValue(run('second'));
        bind(FunctionCallMiddleware).toConstantValue(call('tools'));
      }),
    };
    const container = createContainer({
      plugins: [policy, openaiPlugin({ apiKey: 'test', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 })],
      tools: [weather],
      agents: { a: { client: 'openai-assistants', model: 'gpt-test', tools: ['get_weather'], polling: { intervalMs: 1 } } },
    });
    const agent = container.get(agentToken('a'));
    expect((await agent.run('call get_weather {"city":"Bern"}')).text).to.equal('get_weather returned: sunny in Bern');
    expect(order).to.deep.equal(['first:before', 'second:before', 'tools:get_weather', 'second:after', 'first:after']);
  });

  it('telemetryPlugin records invoke_agent and execute_tool spans for an openai-assistants agent, the tool span inside the run span', async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const container = createContainer({
      plugins: [telemetryPlugin({ tracerProvider }), openaiPlugin({ apiKey: 'sk-assistants-secret-123', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 })],
      tools: [weather],
      agents: { forecaster: { client: 'openai-assistants', model: 'gpt-test', tools: ['get_weather'], polling: { intervalMs: 1 } } },
    });
    const agent = container.get(agentToken('forecaster'));
    const thread = agent.getNewThread();
    await agent.run('call get_weather {"city":"Rome"}', { thread });
    await lastValueFrom(agent.runStream('call get_weather {"city":"Oslo"}', { thread }).pipe(toArray()));
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).to.deep.equal(['execute_tool get_weather', 'invoke_agent forecaster', 'execute_tool get_weather', 'invoke_agent forecaster']);
    const [tool1, run1] = spans;
    expect(tool1!.parentSpanContext?.spanId).to.equal(run1!.spanContext().spanId);
    expect(run1!.attributes).to.deep.include({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'openai',
      'gen_ai.agent.name': 'forecaster',
      'gen_ai.conversation.id': thread.serviceThreadId,
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 5,
    });
    expect(tool1!.attributes).to.deep.include({ 'gen_ai.tool.name': 'get_weather', 'gen_ai.tool.call.id': 'call_1' });
    // Contents are off by default, and the key is never recorded.
    const dump = JSON.stringify(spans.map((s) => s.attributes));
    expect(dump).to.not.contain('gen_ai.input.messages');
    expect(dump).to.not.contain('sk-assistants-secret-123');
    await tracerProvider.shutdown();
  });
});
