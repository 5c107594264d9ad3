import 'reflect-metadata';
import { type Message, type Task, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, RestTransportFactory } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport, LegacyRestTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { expect } from 'chai';
import express, { type RequestHandler } from 'express';
import { randomUUID } from 'node:crypto';
import { ChatAgent } from 'skein';
import { A2AAgent, A2AServer, partsText } from 'skein/a2a';
import { OpenAIChatClient } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { ScriptedExecutor, expectScriptedConversation, startSdkServer, userMessage } from './remote-fixtures.js';

function answerText(result: Message | Task): string {
  if ('messageId' in result) return partsText(result.parts);
  return result.artifacts.map((a) => partsText(a.parts)).join('');
}

describe('A2AServer bindings: JSON-RPC, HTTP+JSON, and v0.3 clients through the SDK compat layer', () => {
  let emulator: Emulator;
  let server: A2AServer;

  beforeEach(async () => {
    emulator = await Emulator.start();
    const agent = new ChatAgent({
      chatClient: new OpenAIChatClient({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test' }),
      name: 'assistant',
    });
    server = new A2AServer({ agent, logger: { warn: () => {}, error: () => {} } });
    await server.listen();
  });
  afterEach(async () => {
    await server.close();
    await emulator.stop();
  });

  it('the SDK client over HTTP+JSON keeps a conversation and streams', async () => {
    const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new RestTransportFactory()], preferredTransports: ['HTTP+JSON'] });
    const client = await new ClientFactory(options).createFromUrl(server.url!);
    const first = await client.sendMessage({ tenant: '', message: userMessage('My name is Ada'), configuration: undefined, metadata: undefined });
    const contextId = (first as Task).contextId;
    const events = [];
    for await (const event of client.sendMessageStream({ tenant: '', message: userMessage("What's my name?", { contextId }), configuration: undefined, metadata: undefined })) events.push(event);
    const final = events.map((e) => e.payload).filter((p) => p?.$case === 'statusUpdate').pop();
    expect(final?.$case === 'statusUpdate' && final.value.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
    const text = events.map((e) => (e.payload?.$case === 'artifactUpdate' ? partsText(e.payload.value.artifact?.parts) : '')).join('');
    expect(text).to.contain('Ada');
  });

  it('a v0.3 JSON-RPC client (message/send, no A2A-Version header) reads the 0.3 card (?A2A-Version=0.3) and keeps a conversation', async () => {
    const card = await (await fetch(`${server.agentCardUrl!}?A2A-Version=0.3`)).json();
    expect(card.protocolVersion).to.equal('0.3');
    expect(card.url).to.equal(`${server.url}/a2a/jsonrpc`);
    const call = async (text: string, contextId?: string) => {
      const body = {
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...(contextId ? { contextId } : {}) } },
      };
      const response = await fetch(card.url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      return (await response.json()) as { result: { kind: string; contextId: string; status: { state: string }; artifacts: { parts: { kind: string; text?: string }[] }[] } };
    };
    const first = await call('My name is Ada');
    expect(first.result.kind).to.equal('task');
    expect(first.result.status.state).to.equal('completed');
    const second = await call("What's my name?", first.result.contextId);
    expect(second.result.artifacts.flatMap((a) => a.parts).map((p) => p.text).join('')).to.contain('Ada');
  });

  it("the SDK's v0.3 transports (JSON-RPC and HTTP+JSON) work against it", async () => {
    for (const transport of [
      new LegacyJsonRpcTransport({ endpoint: `${server.url}/a2a/jsonrpc` }),
      new LegacyRestTransport({ endpoint: `${server.url}/a2a/rest` }),
    ]) {
      const first = await transport.sendMessage({ tenant: '', message: userMessage('My name is Grace'), configuration: undefined, metadata: undefined });
      const contextId = 'messageId' in first ? first.contextId : first.contextId;
      const second = await transport.sendMessage({ tenant: '', message: userMessage("What's my name?", { contextId }), configuration: undefined, metadata: undefined });
      expect(answerText(second), transport.constructor.name).to.contain('Grace');
    }
  });
});

describe('A2AAgent against SDK servers of every binding', () => {
  for (const setup of [
    { name: 'an A2A 0.3 JSON-RPC server (compat chosen from the card)', options: { legacy: true }, wire: 'message/stream' },
    { name: 'an A2A 0.3 HTTP+JSON server', options: { legacy: true, rest: true }, wire: '/rest/v1/message:stream' },
    { name: 'an HTTP+JSON-only 1.0 server', options: { rest: true }, wire: '/rest/message:stream' },
  ]) {
    it(`${setup.name}: input-required continues, streams, direct messages`, async () => {
      const seen: string[] = [];
      const json = express.json();
      const gate: RequestHandler = (req, res, next) => json(req, res, () => (seen.push(String((req.body as { method?: string } | undefined)?.method ?? req.path)), next()));
      const remote = await startSdkServer(new ScriptedExecutor(), { ...setup.options, gate });
      try {
        await expectScriptedConversation(new A2AAgent({ url: remote.cardUrl }));
        expect(seen.some((w) => w.endsWith(setup.wire)), seen.join(', ')).to.equal(true);
      } finally {
        await remote.close();
      }
    });
  }

  it('data parts arrive as structured JSON, file parts keep their names', async () => {
    const remote = await startSdkServer(new ScriptedExecutor());
    try {
      const response = await new A2AAgent({ url: remote.cardUrl }).run('files');
      const [text, data, file, link] = response.messages[0]!.contents;
      expect(text).to.deep.include({ kind: 'text', text: 'here you are' });
      expect(data).to.deep.include({ kind: 'data', mediaType: 'application/json' });
      expect(data!.additionalProperties?.json).to.deep.equal({ total: 3, items: ['a', 'b'] });
      expect(JSON.parse(Buffer.from((data as { data: string }).data, 'base64').toString())).to.deep.equal({ total: 3, items: ['a', 'b'] });
      expect(file).to.deep.include({ kind: 'data', mediaType: 'text/csv', additionalProperties: { filename: 'report.csv' } });
      expect(Buffer.from((file as { data: string }).data, 'base64').toString()).to.equal('a,b\n1,2\n');
      expect(link).to.deep.equal({ kind: 'uri', uri: 'https://files.example/q3.pdf', mediaType: 'application/pdf', additionalProperties: { filename: 'q3-summary.pdf' } });
    } finally {
      await remote.close();
    }
  });
});
