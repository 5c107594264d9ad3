import 'reflect-metadata';
import { type Message, Role } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { expect } from 'chai';
import type { RequestHandler } from 'express';
import { randomUUID } from 'node:crypto';
import { ChatAgent } from 'skein';
import { A2AAgent, A2AServer } from 'skein/a2a';
import { OpenAIChatClient } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { telemetryMiddleware } from 'skein/telemetry';
import { ScriptedExecutor, startSdkServer } from './remote-fixtures.js';
import { useTraceContext } from '../support/trace-context.js';

describe('A2A trace context: W3C traceparent from client to server', () => {
  const { exporter, tracerProvider } = useTraceContext();

  it("A2AAgent sends its run span's traceparent to the SDK server on every call", async () => {
    const traceparents: (string | undefined)[] = [];
    const gate: RequestHandler = (req, _res, next) => {
      if (req.method === 'POST') traceparents.push(req.headers.traceparent as string | undefined);
      next();
    };
    const remote = await startSdkServer(new ScriptedExecutor(), { gate });
    try {
      const agent = new A2AAgent({ url: remote.cardUrl, name: 'scripted', middleware: telemetryMiddleware({ tracerProvider }) });
      await agent.run('hello');
      const [span] = exporter.getFinishedSpans();
      expect(span!.name).to.equal('invoke_agent scripted');
      const { traceId, spanId } = span!.spanContext();
      expect(traceparents).to.deep.equal([`00-${traceId}-${spanId}-01`]);
    } finally {
      await remote.close();
    }
  });

  it("A2AServer runs the hosted agent under the SDK client's traceparent: its spans join the caller's trace", async () => {
    const emulator = await Emulator.start();
    const agent = new ChatAgent({
      chatClient: new OpenAIChatClient({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test' }),
      name: 'assistant',
      middleware: telemetryMiddleware({ tracerProvider }),
    });
    const server = new A2AServer({ agent, logger: { warn: () => {}, error: () => {} } });
    await server.listen();
    try {
      const traceId = randomUUID().replace(/-/g, '');
      const parentSpanId = '00f067aa0ba902b7';
      const fetchImpl: typeof fetch = (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set('traceparent', `00-${traceId}-${parentSpanId}-01`);
        return fetch(input, { ...init, headers });
      };
      const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] });
      const client = await new ClientFactory(options).createFromUrl(server.url!);
      const message: Message = {
        messageId: randomUUID(),
        contextId: '',
        taskId: '',
        role: Role.ROLE_USER,
        parts: [{ content: { $case: 'text', value: 'hello' }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      };
      await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined });
      const run = exporter.getFinishedSpans().find((s) => s.name === 'invoke_agent assistant');
      expect(run, exporter.getFinishedSpans().map((s) => s.name).join(', ')).not.to.equal(undefined);
      expect(run!.spanContext().traceId).to.equal(traceId);
      expect(run!.parentSpanContext?.spanId).to.equal(parentSpanId);
      const chat = exporter.getFinishedSpans().find((s) => s.name.startsWith('chat'));
      expect(chat?.spanContext().traceId).to.equal(traceId);
    } finally {
      await server.close();
      await emulator.stop();
    }
  });
});
