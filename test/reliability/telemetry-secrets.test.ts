import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';
import { type AIAgent, type AgentConfig, type AgentThread, type SkeinPlugin, agentToken, createContainer } from 'skein';
import { A2AServer, a2aPlugin } from 'skein/a2a';
import { azureAIAgentsPlugin, createEmulatorAgentsClient } from 'skein/azure-ai-agents';
import { openaiPlugin } from 'skein/openai';
import { telemetryPlugin } from 'skein/telemetry';
import { Emulator } from 'skein/testing';
import { rejection } from './providers.js';

const API_KEY = 'sk-SECRET-otel-openai-4b7e1d';
const AZURE_TOKEN = 'az-SECRET-otel-token-c93a20';
const A2A_TOKEN = 'a2a-SECRET-otel-header-0f6e88';
const SECRETS = [API_KEY, AZURE_TOKEN, A2A_TOKEN];

/** Everything an exporter would ship from a span. */
function dump(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(
    spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status, links: s.links, resource: s.resource.attributes })),
  );
}

interface TelemetryCase {
  id: string;
  /** `gen_ai.provider.name` of the agent's own run spans: every agent the container builds is instrumented. */
  provider: string;
  /** The secret the provider's requests must carry. */
  secret: string;
  build(emulator: Emulator, telemetry: () => SkeinPlugin): Promise<{ agent: AIAgent; modelCall(thread: AgentThread): { path: string; method: string }; close(): Promise<void> }>;
}

const openai = (emulator: Emulator) => openaiPlugin({ apiKey: API_KEY, baseURL: emulator.openaiBaseURL, maxRetries: 0 });

async function agentFrom(plugins: SkeinPlugin[], config: AgentConfig): Promise<AIAgent> {
  const container = await createContainer({ plugins, agents: { assistant: config } });
  return container.get<AIAgent>(agentToken('assistant'));
}

function openaiCase(id: string, config: AgentConfig, path: (thread: AgentThread) => string): TelemetryCase {
  return {
    id,
    provider: 'openai',
    secret: API_KEY,
    async build(emulator, telemetry) {
      const agent = await agentFrom([telemetry(), openai(emulator)], config);
      return { agent, modelCall: (thread) => ({ path: path(thread), method: 'POST' }), close: async () => {} };
    },
  };
}

const CASES: TelemetryCase[] = [
  openaiCase('openai-chat', { client: 'openai-chat', model: 'gpt-test', instructions: 'Be brief.' }, () => '/v1/chat/completions'),
  openaiCase('openai-responses', { client: 'openai-responses', model: 'gpt-test' }, () => '/v1/responses'),
  openaiCase('openai-responses (store: false)', { client: 'openai-responses', model: 'gpt-test', store: false }, () => '/v1/responses'),
  openaiCase('openai-assistants', { client: 'openai-assistants', model: 'gpt-test', polling: { intervalMs: 1 } }, (t) => `/v1/threads/${t.serviceThreadId}/runs`),
  {
    id: 'azure-ai-agents',
    provider: 'azure.ai.agents',
    secret: AZURE_TOKEN,
    async build(emulator, telemetry) {
      const client = createEmulatorAgentsClient(emulator.url, { token: AZURE_TOKEN, clientOptions: { retryOptions: { maxRetries: 0 } } });
      const agent = await agentFrom([telemetry(), azureAIAgentsPlugin({ client, pollIntervalMs: 1 })], {
        client: 'azure-ai-agents',
        model: 'gpt-test',
        instructions: 'You are helpful.',
      });
      return { agent, modelCall: (t) => ({ path: `/api/projects/emulated/threads/${t.serviceThreadId}/runs`, method: 'POST' }), close: async () => {} };
    },
  },
  {
    id: 'a2a',
    // Both sides are instrumented: the A2AAgent's run spans and the hosting server's ChatAgent spans.
    provider: 'a2a',
    secret: A2A_TOKEN,
    async build(emulator, telemetry) {
      const hosted = await agentFrom([telemetry(), openai(emulator)], { client: 'openai-chat', model: 'gpt-test', name: 'hosted' });
      const server = new A2AServer({ agent: hosted });
      await server.listen();
      const agent = await agentFrom([telemetry(), a2aPlugin({ headers: { authorization: `Bearer ${A2A_TOKEN}` } })], { client: 'a2a', url: server.agentCardUrl! });
      return { agent, modelCall: () => ({ path: '/v1/chat/completions', method: 'POST' }), close: () => server.close() };
    },
  },
];

describe('reliability: secrets never reach telemetry (telemetryPlugin with captureContent)', function () {
  this.timeout(20_000);
  let emulator: Emulator;
  let exporter: InMemorySpanExporter;
  let tracerProvider: BasicTracerProvider;
  let close: () => Promise<void> = async () => {};

  beforeEach(async () => {
    emulator = await Emulator.start();
    exporter = new InMemorySpanExporter();
    tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  });
  afterEach(async () => {
    await close();
    close = async () => {};
    await tracerProvider.shutdown();
    await emulator.stop();
  });

  for (const c of CASES) {
    it(`${c.id}: no span attribute, event or status holds a configured secret, on success and on 5xx, 401 and a cut stream`, async () => {
      const built = await c.build(emulator, () => telemetryPlugin({ captureContent: true, tracerProvider }));
      close = built.close;
      const { agent } = built;
      const thread = agent.getNewThread();
      await agent.run('My name is Ada.', { thread });
      await new Promise<void>((resolve, reject) => agent.runStream("What's my name?", { thread }).subscribe({ error: reject, complete: resolve }));
      // The secret was really in use.
      expect(emulator.requests.map((r) => JSON.stringify(r.headers)).join('\n')).to.include(c.id === 'a2a' ? API_KEY : c.secret);

      emulator.injectFault({ kind: 'status', status: 500, ...built.modelCall(thread) });
      await rejection(agent.run('My name is Bob.', { thread }));
      emulator.injectFault({ kind: 'status', status: 401, message: 'Incorrect API key provided.', ...built.modelCall(thread) });
      await rejection(agent.run('My name is Bob.', { thread }));
      emulator.injectFault({ kind: 'cut-stream', afterEvents: 2, ...built.modelCall(thread) });
      await rejection(new Promise((resolve, reject) => agent.runStream('My name is Bob.', { thread }).subscribe({ error: reject, complete: () => resolve(undefined) })));

      const spans = exporter.getFinishedSpans();
      // Not vacuous: the agent's own run spans, with captured content and recorded failures, were exported.
      const own = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent' && s.attributes['gen_ai.provider.name'] === c.provider);
      expect(own.length, `invoke_agent spans of ${c.provider}`).to.be.greaterThanOrEqual(5);
      expect(own.some((s) => s.attributes['gen_ai.input.messages'] !== undefined), 'captured content').to.equal(true);
      expect(own.some((s) => s.events.some((e) => e.name === 'exception')), 'a recorded exception').to.equal(true);
      const text = dump(spans);
      for (const secret of SECRETS) expect(text.includes(secret), `spans contain ${secret}`).to.equal(false);
    });
  }
});
