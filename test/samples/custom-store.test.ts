import { expect } from 'chai';
import type { Container } from 'inversify';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EMPTY } from 'rxjs';
import sinon from 'sinon';
import {
  type AIAgent,
  ChatClient,
  type ChatMessage,
  type ChatOptions,
  type ChatResponse,
  SerializationError,
  agentToken,
  messageText,
} from 'skein';
import { JsonFileChatMessageStore } from '../../samples/custom-store/json-file-store/index.js';
import { InMemorySessions, type OrderBook, SUPPORT_AGENT, SupportDesk, createSupportContainer } from '../../samples/custom-store/support-desk.js';

const say = (text: string): ChatResponse => ({ messages: [{ role: 'assistant', contents: [{ kind: 'text', text }] }], finishReason: 'stop' });
const texts = (messages: readonly ChatMessage[]) => messages.map((m) => `${m.role}: ${messageText(m)}`);

describe('samples/custom-store: an app on Skein with a JSON-file message store (ChatClient stubbed with sinon)', () => {
  let directory: string;
  let sessions: InMemorySessions;
  let orders: { statusOf: sinon.SinonStub<[string], Promise<string | undefined>> };
  let getResponse: sinon.SinonStub<[readonly ChatMessage[], ChatOptions?], Promise<ChatResponse>>;

  /** The app's container with the model swapped for the stub, as a test (or a restart) builds it. */
  function appContainer(): Container {
    const container = createSupportContainer({
      openai: { apiKey: 'never-used', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0 },
      threadsDirectory: directory,
      orders: orders as OrderBook,
    });
    const stub: ChatClient = { providerId: 'openai-chat', threadKind: 'message-store', getResponse, getStreamingResponse: () => EMPTY };
    container.rebind(ChatClient).toConstantValue(stub);
    return container;
  }

  beforeEach(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'skein-custom-store-test-'));
    sessions = new InMemorySessions();
    orders = { statusOf: sinon.stub<[string], Promise<string | undefined>>().resolves(undefined) };
    getResponse = sinon.stub<[readonly ChatMessage[], ChatOptions?], Promise<ChatResponse>>();
  });
  afterEach(async () => {
    sinon.restore();
    await rm(directory, { recursive: true, force: true });
  });

  it('answers through the model, sends the history on the next question, and keeps it in one file per thread', async () => {
    getResponse.onFirstCall().resolves(say('Hello Alice!')).onSecondCall().resolves(say('You are Alice.'));
    const desk = new SupportDesk(appContainer(), sessions);

    expect(await desk.ask('alice', 'My name is Alice.')).to.equal('Hello Alice!');
    expect(await desk.ask('alice', 'Who am I?')).to.equal('You are Alice.');

    expect(getResponse.callCount).to.equal(2);
    expect(texts(getResponse.secondCall.args[0])).to.deep.equal(['user: My name is Alice.', 'assistant: Hello Alice!', 'user: Who am I?']);
    expect(getResponse.firstCall.args[1]?.instructions).to.contain('support desk');

    // The session holds the store's key only; the messages are in <directory>/<key>.json.
    const session = JSON.parse((await sessions.load('alice'))!) as { $type: string; store: { key: string } };
    expect(session.$type).to.equal('json-file');
    expect(session.store).to.have.keys(['key']);
    expect(JSON.stringify(session)).to.not.contain('Alice');
    expect(await readdir(directory)).to.deep.equal([`${session.store.key}.json`]);
    const file = JSON.parse(await readFile(path.join(directory, `${session.store.key}.json`), 'utf8')) as { messages: ChatMessage[] };
    expect(texts(file.messages)).to.deep.equal(['user: My name is Alice.', 'assistant: Hello Alice!', 'user: Who am I?', 'assistant: You are Alice.']);
  });

  it('runs the order tool the model asks for, with the app\'s OrderBook', async () => {
    orders.statusOf.withArgs('BLUEJAY').resolves('shipped');
    getResponse
      .onFirstCall()
      .resolves({ messages: [{ role: 'assistant', contents: [{ kind: 'function-call', callId: 'c1', name: 'lookup_order', arguments: '{"orderId":"BLUEJAY"}' }] }], finishReason: 'tool_calls' })
      .onSecondCall()
      .resolves(say('Your order has shipped.'));
    const desk = new SupportDesk(appContainer(), sessions);

    expect(await desk.ask('bob', 'Where is order BLUEJAY?')).to.equal('Your order has shipped.');
    sinon.assert.calledOnceWithExactly(orders.statusOf, 'BLUEJAY');
    const result = getResponse.secondCall.args[0].at(-1)!.contents[0];
    expect(result).to.deep.include({ kind: 'function-result', callId: 'c1', result: 'shipped' });
    expect((await desk.history('bob')).map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
  });

  it("the store's state survives serialize -> deserialize: a new container continues the same conversation", async () => {
    getResponse.onFirstCall().resolves(say('Hello Alice!')).onSecondCall().resolves(say('You are Alice.'));
    const first = new SupportDesk(appContainer(), sessions);
    await first.ask('alice', 'My name is Alice.');
    const before = await first.history('alice');

    // Directly through the agent: serialize, JSON round trip, deserialize in another container.
    const agentA = appContainer().get<AIAgent>(agentToken(SUPPORT_AGENT));
    const thread = await agentA.deserializeThread(JSON.parse((await sessions.load('alice'))!));
    const json = JSON.parse(JSON.stringify(await thread.serialize())) as unknown;
    const agentB = appContainer().get<AIAgent>(agentToken(SUPPORT_AGENT));
    const restored = await agentB.deserializeThread(json);
    expect(restored.messageStore).to.be.instanceOf(JsonFileChatMessageStore);
    expect(await restored.messageStore!.listMessages()).to.deep.equal(before);

    // And through the app, after a "restart".
    const second = new SupportDesk(appContainer(), sessions);
    expect(await second.ask('alice', 'Who am I?')).to.equal('You are Alice.');
    expect(texts(getResponse.secondCall.args[0])).to.deep.equal(['user: My name is Alice.', 'assistant: Hello Alice!', 'user: Who am I?']);
    expect(await second.history('alice')).to.have.length(4);
  });

  it('a failed model call leaves the conversation as it was', async () => {
    getResponse.onFirstCall().resolves(say('Hello Alice!')).onSecondCall().rejects(new Error('model down')).onThirdCall().resolves(say('Still here.'));
    const desk = new SupportDesk(appContainer(), sessions);
    await desk.ask('alice', 'My name is Alice.');
    const saved = await sessions.load('alice');
    const error = await desk.ask('alice', 'Who am I?').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error).message).to.contain('model down');
    expect(await sessions.load('alice')).to.equal(saved);
    expect(texts(await desk.history('alice'))).to.deep.equal(['user: My name is Alice.', 'assistant: Hello Alice!']);
  });

  it('a tampered session is a SerializationError naming the field; no file is read or written, the model is not called', async () => {
    const desk = new SupportDesk(appContainer(), sessions);
    await sessions.save('mallory', JSON.stringify({ $type: 'json-file', version: 1, provider: 'openai-chat', agent: 'support', store: { key: '../../etc/passwd' } }));
    const error = await desk.ask('mallory', 'hi').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(SerializationError);
    expect((error as SerializationError).path).to.equal('$.store.key');
    sinon.assert.notCalled(getResponse);
    expect(await readdir(directory)).to.deep.equal([]);
  });

  it('forget deletes the thread file and the session', async () => {
    getResponse.resolves(say('ok'));
    const desk = new SupportDesk(appContainer(), sessions);
    await desk.ask('carol', 'hello');
    expect(await readdir(directory)).to.have.length(1);
    await desk.forget('carol');
    expect(await readdir(directory)).to.deep.equal([]);
    expect(await sessions.load('carol')).to.equal(undefined);
  });
});

describe('samples/custom-store/main (runs as written)', () => {
  it('holds a conversation in a JSON file on the emulator, resumes it after a restart, and forgets it', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const { fileURLToPath } = await import('node:url');
    const sample = fileURLToPath(new URL('../../samples/custom-store/main.js', import.meta.url));
    const env = { ...process.env };
    delete env.OPENAI_API_KEY;
    const { stdout } = await promisify(execFile)(process.execPath, [sample], { env });
    expect(stdout).to.contain('Desk: lookup_order returned: shipped on Monday, arriving Thursday');
    expect(stdout).to.match(/Session kept by the app: \{"\$type":"json-file",[^\n]*"store":\{"key":"[0-9a-f-]{36}"\}\}/);
    expect(stdout).to.contain('Alice (after a restart): What\'s my name?\nDesk: Your name is Alice.');
    expect(stdout).to.contain("(8 messages in Alice's thread file)");
    expect(stdout).to.contain('After forget: 0 thread files');
  });
});
