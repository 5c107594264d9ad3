import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { ChatAgent, type ChatClientMiddleware, type ChatMessage, ServiceError, agentToken, createContainer, resolveConfigFile, tool } from 'skein';
import { OpenAIChatClient, OpenAIResponsesClient, openaiPlugin } from 'skein/openai';
import { TelemetryMiddleware, telemetryMiddleware, telemetryPlugin } from 'skein/telemetry';
import { useEmulator } from '../support/emulator.js';

const API_KEY = 'sk-telemetry-secret-0123456789';

const weather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `Sunny in ${city}`,
});

const failing = tool({
  name: 'flaky_lookup',
  parameters: z.object({}),
  execute: () => {
    throw new Error('lookup service down');
  },
});

function spanNamed(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.find((s) => s.name === name);
  expect(found, `span "${name}" in [${spans.map((s) => s.name).join(', ')}]`).to.not.equal(undefined);
  return found!;
}

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** Everything a backend would receive from a span, as one string. */
function dump(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })));
}

describe('telemetry: OpenTelemetry GenAI spans (ChatAgent + OpenAIChatClient on the emulator)', () => {
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider;

  const emu = useEmulator();
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  });
  afterEach(async () => {
    trace.disable();
    emu.emulator.clearFaults();
    await provider.shutdown();
  });

  const client = () => new OpenAIChatClient({ apiKey: API_KEY, baseURL: emu.emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 });

  it('nests chat and tool spans under the run span, with the GenAI attributes', async () => {
    const agent = new ChatAgent({
      chatClient: client(),
      name: 'forecaster',
      description: 'Answers weather questions',
      tools: [weather],
      chatOptions: { model: 'gpt-4.1' },
      middleware: telemetryMiddleware({ tracerProvider: provider }),
    });
    const r = await agent.run('What is the weather in Paris?');
    expect(r.text).to.contain('Sunny in Paris');

    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name).sort()).to.deep.equal(['chat gpt-4.1', 'chat gpt-4.1', 'execute_tool get_weather', 'invoke_agent forecaster']);
    const run = spanNamed(spans, 'invoke_agent forecaster');
    const chats = spans.filter((s) => s.name === 'chat gpt-4.1');
    const toolSpan = spanNamed(spans, 'execute_tool get_weather');

    expect(parentOf(run)).to.equal(undefined);
    for (const s of [...chats, toolSpan]) {
      expect(s.spanContext().traceId).to.equal(run.spanContext().traceId);
      expect(parentOf(s)).to.equal(run.spanContext().spanId);
    }
    expect(run.kind).to.equal(SpanKind.INTERNAL);
    expect(run.attributes).to.include({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'forecaster',
      'gen_ai.agent.description': 'Answers weather questions',
      'gen_ai.provider.name': 'openai',
    });
    expect(run.attributes['gen_ai.usage.input_tokens']).to.be.a('number').greaterThan(0);

    const [first, second] = [...chats].sort((a, b) => (a.startTime[0] - b.startTime[0]) * 1e9 + (a.startTime[1] - b.startTime[1]));
    expect(first!.kind).to.equal(SpanKind.CLIENT);
    expect(first!.attributes).to.include({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4.1', 'gen_ai.provider.name': 'openai', 'gen_ai.system': 'openai' });
    expect(first!.attributes['gen_ai.response.finish_reasons']).to.deep.equal(['tool_calls']);
    expect(second!.attributes['gen_ai.response.finish_reasons']).to.deep.equal(['stop']);
    expect(first!.attributes['gen_ai.response.id']).to.be.a('string').and.not.equal(second!.attributes['gen_ai.response.id']);
    expect(first!.attributes['gen_ai.usage.input_tokens']).to.be.a('number').greaterThan(0);
    expect(first!.attributes['gen_ai.usage.output_tokens']).to.be.a('number').greaterThan(0);
    // The run's usage is the sum of its model calls.
    expect(run.attributes['gen_ai.usage.input_tokens']).to.equal(
      (first!.attributes['gen_ai.usage.input_tokens'] as number) + (second!.attributes['gen_ai.usage.input_tokens'] as number),
    );

    const call = r.messages.flatMap((m) => m.contents).find((c) => c.kind === 'function-call')!;
    expect(toolSpan.attributes).to.include({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.description': 'Current weather for a city',
      'gen_ai.tool.call.id': call.kind === 'function-call' ? call.callId : '',
    });
    expect(toolSpan.status.code).to.not.equal(SpanStatusCode.ERROR);
  });

  it('records the conversation id of a service thread (Responses conversation) on run and chat spans', async () => {
    const agent = new ChatAgent({
      chatClient: new OpenAIResponsesClient({ apiKey: API_KEY, baseURL: emu.emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0, conversation: true }),
      name: 'memo',
      middleware: telemetryMiddleware({ tracerProvider: provider }),
    });
    const thread = agent.getNewThread();
    await agent.run('My name is Ada.', { thread });
    await agent.run("What's my name?", { thread });
    expect(thread.serviceThreadId).to.match(/^conv_/);
    const runs = exporter.getFinishedSpans().filter((s) => s.name === 'invoke_agent memo');
    expect(runs).to.have.length(2);
    expect(runs.map((s) => s.attributes['gen_ai.conversation.id'])).to.deep.equal([thread.serviceThreadId, thread.serviceThreadId]);
    const secondChat = exporter.getFinishedSpans().filter((s) => s.name.startsWith('chat'))[1]!;
    expect(secondChat.attributes['gen_ai.conversation.id']).to.equal(thread.serviceThreadId);
  });

  it('a tool that fails gives an ERROR tool span; the run itself succeeds', async () => {
    const agent = new ChatAgent({ chatClient: client(), name: 'a', tools: [failing], middleware: telemetryMiddleware({ tracerProvider: provider }) });
    await agent.run('call flaky_lookup {}');
    const spans = exporter.getFinishedSpans();
    const toolSpan = spanNamed(spans, 'execute_tool flaky_lookup');
    expect(toolSpan.status.code).to.equal(SpanStatusCode.ERROR);
    expect(toolSpan.status.message).to.contain('lookup service down');
    expect(toolSpan.attributes['error.type']).to.equal('tool_error');
    expect(spanNamed(spans, 'invoke_agent a').status.code).to.not.equal(SpanStatusCode.ERROR);
  });

  it('a 500 from the service marks the chat and run spans ERROR with error.type and the exception', async () => {
    const agent = new ChatAgent({ chatClient: client(), name: 'a', middleware: telemetryMiddleware({ tracerProvider: provider }) });
    emu.emulator.injectFault({ kind: 'status', status: 500, message: 'upstream exploded', path: '/v1/chat/completions' });
    const error = await agent.run('hello').then(
      () => expect.fail('expected the run to fail'),
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ServiceError);
    const spans = exporter.getFinishedSpans();
    const run = spanNamed(spans, 'invoke_agent a');
    const chat = spanNamed(spans, 'chat gpt-4.1');
    expect(parentOf(chat)).to.equal(run.spanContext().spanId);
    for (const s of [run, chat]) {
      expect(s.status.code).to.equal(SpanStatusCode.ERROR);
      expect(s.attributes['error.type']).to.equal((error as Error).constructor.name);
      expect(s.events.map((e) => e.name)).to.include('exception');
    }
    expect(chat.status.message).to.contain('upstream exploded');
  });

  it('streaming runs are traced the same way, with usage from the stream', async () => {
    const agent = new ChatAgent({ chatClient: client(), name: 'streamer', tools: [weather], middleware: telemetryMiddleware({ tracerProvider: provider }) });
    const updates = await lastValueFrom(agent.runStream('What is the weather in Oslo?').pipe(toArray()));
    expect(updates.map((u) => u.text).join('')).to.contain('Sunny in Oslo');
    const spans = exporter.getFinishedSpans();
    const run = spanNamed(spans, 'invoke_agent streamer');
    const chats = spans.filter((s) => s.name === 'chat gpt-4.1');
    expect(chats).to.have.length(2);
    for (const s of [...chats, spanNamed(spans, 'execute_tool get_weather')]) expect(parentOf(s)).to.equal(run.spanContext().spanId);
    expect(chats[0]!.attributes['gen_ai.usage.output_tokens']).to.be.a('number').greaterThan(0);
  });

  it('records no message contents by default, and never the API key', async () => {
    const agent = new ChatAgent({
      chatClient: client(),
      name: 'a',
      instructions: 'Secret house rules',
      tools: [weather],
      middleware: telemetryMiddleware({ tracerProvider: provider }),
    });
    await agent.run('What is the weather in Zanzibar?');
    const spans = exporter.getFinishedSpans();
    expect(spans).to.have.length(4);
    const all = dump(spans);
    for (const key of ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.system_instructions', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result']) {
      expect(all).to.not.contain(key);
    }
    expect(all).to.not.contain('Zanzibar');
    expect(all).to.not.contain('Secret house rules');
    expect(all).to.not.contain(API_KEY);
  });

  it('records contents when captureContent is on: input/output messages, instructions, tool arguments and results (never the key)', async () => {
    const agent = new ChatAgent({
      chatClient: client(),
      name: 'a',
      instructions: 'Be brief.',
      tools: [weather],
      middleware: telemetryMiddleware({ tracerProvider: provider, captureContent: true }),
    });
    await agent.run('What is the weather in Zanzibar?');
    const spans = exporter.getFinishedSpans();
    const run = spanNamed(spans, 'invoke_agent a');
    const input = JSON.parse(run.attributes['gen_ai.input.messages'] as string) as { role: string; parts: { type: string; content?: string }[] }[];
    expect(input).to.deep.equal([{ role: 'user', parts: [{ type: 'text', content: 'What is the weather in Zanzibar?' }] }]);
    const output = JSON.parse(run.attributes['gen_ai.output.messages'] as string) as { role: string; parts: { type: string }[] }[];
    expect(output.map((m) => m.role)).to.deep.equal(['assistant', 'tool', 'assistant']);
    expect(output[0]!.parts[0]).to.deep.include({ type: 'tool_call', name: 'get_weather', arguments: { city: 'Zanzibar' } });
    expect(output[1]!.parts[0]).to.deep.include({ type: 'tool_call_response', response: 'Sunny in Zanzibar' });
    expect(JSON.parse(run.attributes['gen_ai.system_instructions'] as string)).to.deep.equal([{ type: 'text', content: 'Be brief.' }]);

    const lastChat = spans.filter((s) => s.name === 'chat gpt-4.1').at(-1)!;
    const chatOut = JSON.parse(lastChat.attributes['gen_ai.output.messages'] as string) as { finish_reason?: string; parts: { content?: string }[] }[];
    expect(chatOut[0]!.finish_reason).to.equal('stop');
    expect(chatOut[0]!.parts[0]!.content).to.contain('Sunny in Zanzibar');

    const toolSpan = spanNamed(spans, 'execute_tool get_weather');
    expect(JSON.parse(toolSpan.attributes['gen_ai.tool.call.arguments'] as string)).to.deep.equal({ city: 'Zanzibar' });
    expect(JSON.parse(toolSpan.attributes['gen_ai.tool.call.result'] as string)).to.equal('Sunny in Zanzibar');
    expect(dump(spans)).to.not.contain(API_KEY);
  });

  it('chat spans record what left the process: a redaction middleware registered after telemetry applies', async () => {
    const redact: ChatClientMiddleware = {
      onChatRequest(context, next) {
        const clean = (m: ChatMessage): ChatMessage => ({
          ...m,
          contents: m.contents.map((c) => (c.kind === 'text' ? { ...c, text: c.text.replace(/sk-[A-Za-z0-9-]{8,}/g, '[REDACTED]') } : c)),
        });
        context.messages = context.messages.map(clean);
        return next();
      },
    };
    const t = telemetryMiddleware({ tracerProvider: provider, captureContent: true });
    const agent = new ChatAgent({ chatClient: client(), name: 'a', middleware: { ...t, chatClient: [...t.chatClient, redact] } });
    await agent.run(`my key is ${API_KEY}, keep it`);
    const chat = spanNamed(exporter.getFinishedSpans(), 'chat gpt-4.1');
    expect(chat.attributes['gen_ai.input.messages']).to.contain('my key is [REDACTED], keep it');
    expect(chat.attributes['gen_ai.input.messages']).to.not.contain(API_KEY);
  });

  it('records nothing without an SDK; the same middleware starts recording once the app registers a provider', async () => {
    const middleware = telemetryMiddleware();
    const agent = new ChatAgent({ chatClient: client(), name: 'quiet', tools: [weather], middleware });
    const seen: boolean[] = [];
    const probe: ChatClientMiddleware = {
      onChatRequest(_context, next) {
        seen.push(trace.getActiveSpan()?.isRecording() ?? false);
        return next();
      },
    };
    const probing = new ChatAgent({ chatClient: client(), name: 'quiet', middleware: { ...middleware, chatClient: [...middleware.chatClient, probe] } });
    const r = await agent.run('What is the weather in Rome?');
    expect(r.text).to.contain('Sunny in Rome');
    await probing.run('hello');
    expect(seen).to.deep.equal([false]);
    expect(exporter.getFinishedSpans()).to.deep.equal([]);

    expect(trace.setGlobalTracerProvider(provider)).to.equal(true);
    await agent.run('What is the weather in Rome?');
    expect(exporter.getFinishedSpans().map((s) => s.name)).to.include('invoke_agent quiet');
  });

  it('telemetryPlugin instruments every agent the container builds, through the global provider', async () => {
    trace.setGlobalTracerProvider(provider);
    const container = createContainer({
      plugins: [telemetryPlugin(), openaiPlugin({ apiKey: API_KEY, baseURL: emu.emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 })],
      agents: {
        support: { client: 'openai-chat', instructions: 'Help.' },
        sales: { client: 'openai-responses', store: false },
      },
    });
    expect(container.get(TelemetryMiddleware)).to.be.instanceOf(TelemetryMiddleware);
    await (container.get(agentToken('support')) as ChatAgent).run('hello');
    await (container.get(agentToken('sales')) as ChatAgent).run('hello');
    const spans = exporter.getFinishedSpans();
    const runs = spans.filter((s) => s.name.startsWith('invoke_agent'));
    expect(runs.map((s) => s.name).sort()).to.deep.equal(['invoke_agent sales', 'invoke_agent support']);
    for (const run of runs) {
      const chats = spans.filter((s) => parentOf(s) === run.spanContext().spanId);
      expect(chats.map((s) => s.name)).to.deep.equal(['chat gpt-4.1']);
    }
    expect(dump(spans)).to.not.contain(API_KEY);
    expect(dump(spans)).to.not.contain('gen_ai.input.messages');
  });

  it('is a built-in plugin of config files: `telemetry: { captureContent: true }`', async () => {
    trace.setGlobalTracerProvider(provider);
    const { config, problems } = await resolveConfigFile({
      plugins: { openai: { apiKey: API_KEY, baseURL: emu.emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 }, telemetry: { captureContent: true } },
      agents: { helper: { client: 'openai-chat' } },
    });
    expect(problems).to.deep.equal([]);
    const container = createContainer(config);
    await (container.get(agentToken('helper')) as ChatAgent).run('My name is Zoe.');
    const run = spanNamed(exporter.getFinishedSpans(), 'invoke_agent helper');
    expect(run.attributes['gen_ai.input.messages']).to.contain('My name is Zoe.');

    const bad = await resolveConfigFile({ plugins: { telemetry: { captureContent: 'yes' } } });
    expect(bad.problems.join('\n')).to.contain('plugins.telemetry.captureContent');
  });
});
