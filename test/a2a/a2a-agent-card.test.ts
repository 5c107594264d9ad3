import 'reflect-metadata';
import { type Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { A2AClient as A2AClientV03, ClientFactory as ClientFactoryV03 } from 'a2a-sdk-v03/client';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import sinon from 'sinon';
import { readFileSync } from 'node:fs';
import { ChatAgent, ConfigurationError } from 'skein';
import { A2AServer, partsText } from 'skein/a2a';
import { OpenAIChatClient } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { rejection } from '../support/async-expectations.js';
import { userMessage } from './remote-fixtures.js';

/** The A2A 1.0.0 JSON schema of the agent card (see test/spec/README.md). */
const SCHEMA_FILE = new URL('../../../test/spec/a2a-1.0.0-agent-card.schema.json', import.meta.url);

/** The published bundle keys definitions by title and refers to them as `lf.a2a.v1.<Title>.jsonschema.json`. */
function cardValidator(): ValidateFunction {
  const bundle = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as { definitions: Record<string, object> };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const [title, definition] of Object.entries(bundle.definitions)) {
    const name = title.replaceAll(' ', '');
    ajv.addSchema({ ...definition, $id: name === 'Struct' ? 'google.protobuf.Struct.jsonschema.json' : `lf.a2a.v1.${name}.jsonschema.json` });
  }
  return ajv.getSchema('lf.a2a.v1.AgentCard.jsonschema.json')!;
}

function schemaErrors(validate: ValidateFunction, card: unknown): string[] {
  return validate(card) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
}

describe('A2AServer agent card: valid against the A2A 1.0 JSON schema, and 0.3 clients still connect', () => {
  const validate = cardValidator();
  let emulator: Emulator;
  let servers: A2AServer[];

  function chatAgent(): ChatAgent {
    return new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test' }), name: 'assistant' });
  }

  async function start(options: Partial<ConstructorParameters<typeof A2AServer>[0]> = {}): Promise<A2AServer> {
    const server = new A2AServer({
      agent: chatAgent(),
      description: 'Answers questions',
      provider: { organization: 'Example Corp', url: 'https://example.com' },
      documentationUrl: 'https://example.com/docs',
      skills: [{ id: 'chat', name: 'Chat', description: 'Talk', tags: ['chat'], examples: ['Hello'] }],
      securitySchemes: { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: '', scheme: 'Bearer', bearerFormat: 'JWT' } } } },
      pushNotifications: true,
      logger: { warn: () => {}, error: () => {} },
      ...options,
    });
    servers.push(server);
    await server.listen();
    return server;
  }

  beforeEach(async () => {
    emulator = await Emulator.start();
    servers = [];
  });
  afterEach(async () => {
    sinon.restore();
    for (const server of servers) await server.close();
    await emulator.stop();
  });

  it('a request naming no version (a plain GET, as registries and validators send) gets the 1.0 card, and it validates; so does A2A-Version: 1.0', async () => {
    const server = await start();
    const asked: Record<string, string>[] = [{}, { 'A2A-Version': '1.0' }];
    for (const headers of asked) {
      const response = await fetch(server.agentCardUrl!, { headers });
      const card = (await response.json()) as Record<string, unknown>;
      expect(schemaErrors(validate, card), JSON.stringify(headers)).to.deep.equal([]);
      expect(card.supportedInterfaces).to.deep.include({ url: `${server.url}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
      expect(card.securitySchemes).to.deep.equal({ bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } } });
      // One URL, two cards: caches must key on the version asked.
      expect(response.headers.get('vary')).to.contain('A2A-Version');
    }
  });

  it('the 0.3 card (what 0.3 clients read: url, preferredTransport, protocolVersion) is not a valid 1.0 card: the schema allows no extra field', async () => {
    const server = await start();
    const legacy = (await (await fetch(server.agentCardUrl!, { headers: { 'A2A-Version': '0.3' } })).json()) as Record<string, unknown>;
    expect(legacy).to.include({ url: `${server.url}/a2a/jsonrpc`, protocolVersion: '0.3', preferredTransport: 'JSONRPC' });
    expect(legacy).to.have.property('additionalInterfaces').that.is.an('array');
    const errors = schemaErrors(validate, legacy);
    expect(errors.join('\n')).to.contain('must NOT have additional properties').and.contain('"additionalProperty":"url"');
  });

  it("the SDK's 1.x client reads the card and talks 1.0", async () => {
    const server = await start();
    const client = await new ClientFactory().createFromUrl(server.url!);
    const result = (await client.sendMessage({ tenant: '', message: userMessage('My name is Ada'), configuration: undefined, metadata: undefined })) as Task;
    expect(result.artifacts.map((a) => partsText(a.parts)).join('')).to.be.a('string').and.not.equal('');
  });

  it('the SDK 0.3 client (@a2a-js/sdk 0.3.14) given the card URL with ?A2A-Version=0.3 keeps a conversation, through its ClientFactory and its A2AClient', async () => {
    const server = await start();
    const cardUrl = `${server.agentCardUrl}?A2A-Version=0.3`;
    const factoryClient = await new ClientFactoryV03().createFromUrl(cardUrl, '');
    const first = await factoryClient.sendMessage({ message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'My name is Grace' }] } });
    expect(first.kind).to.equal('task');
    const second = await factoryClient.sendMessage({ message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: "What's my name?" }], contextId: first.contextId } });
    expect(second.kind === 'task' && second.artifacts?.flatMap((a) => a.parts).map((p) => (p.kind === 'text' ? p.text : '')).join('')).to.contain('Grace');

    const legacyClient = await A2AClientV03.fromCardUrl(cardUrl);
    const answer = await legacyClient.sendMessage({ message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'Hello' }] } });
    expect('result' in answer && answer.result.kind).to.equal('task');
  });

  it('a 0.3 client given the plain card URL reads the 1.0 card and stops (no url field), as documented; unversionedCard: "0.3" serves it the 0.3 card there (which then fails the 1.0 schema)', async () => {
    const strict = await start();
    sinon.stub(console, 'error'); // the 0.3 client logs its failure before throwing it
    const refused = await rejection(A2AClientV03.fromCardUrl(strict.agentCardUrl!));
    expect(refused.message).to.contain("does not contain a valid 'url'");
    sinon.restore();

    const lenient = await start({ unversionedCard: '0.3' });
    const client = await A2AClientV03.fromCardUrl(lenient.agentCardUrl!);
    const answer = await client.sendMessage({ message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'Hello' }] } });
    expect('result' in answer && answer.result.kind).to.equal('task');
    const plain = await (await fetch(lenient.agentCardUrl!)).json();
    expect(schemaErrors(validate, plain)).to.not.deep.equal([]);
    // A 1.x client still gets the 1.0 card there: it asks with A2A-Version: 1.0.
    expect(schemaErrors(validate, await (await fetch(lenient.agentCardUrl!, { headers: { 'A2A-Version': '1.0' } })).json())).to.deep.equal([]);
  });

  it('unversionedCard is checked: "0.3" needs legacyCompat; anything else but "1.0" is refused', () => {
    expect(() => new A2AServer({ agent: chatAgent(), legacyCompat: false, unversionedCard: '0.3' })).to.throw(ConfigurationError, /needs legacyCompat/);
    expect(() => new A2AServer({ agent: chatAgent(), unversionedCard: '0.2' as '0.3' })).to.throw(ConfigurationError, /expected '1.0' or '0.3', found "0.2"/);
  });
});
