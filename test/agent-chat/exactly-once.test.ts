import { expect } from 'chai';
import type { Container } from 'inversify';
import { AbortError, AgentGroupChat, type AgentConfig, type AIAgent, agentToken, type ChatMessage, createContainer, messageText, SkeinError } from 'skein';
import { type AzureAIAgent, azureAIAgentsPlugin, emulatorConnection } from 'skein/azure-ai-agents';
import { openaiPlugin } from 'skein/openai';
import { Emulator, RESPONSES_INPUT_ITEMS_LISTINGS, type ResponsesInputItemsListing } from 'skein/testing';
import { rawClient, viaJson } from './fixture.js';

/**
 * Issue 16 item 3: every chat message reaches each service thread exactly once, whatever turn
 * failed or was aborted in between. Each test lets a service agent's turn end badly after the
 * user and the writer (Chat Completions) spoke, goes on, then lists the service thread's user
 * messages through the official SDK and compares them with the chat.
 */
interface Service {
  /** The agent's name in the chat. */
  name: string;
  config: AgentConfig;
  /** The `$type` of its channel in the serialized chat. */
  channelType: string;
  /** SSE events the emulator sends before the first text delta of a reply. */
  eventsBeforeText: number;
  /** The directive that makes the emulated run fail after it took its input. */
  failMarker?: string;
  /** The user messages on the service thread, oldest first. */
  userTexts: (emulator: Emulator, container: Container, threadId: string) => Promise<string[]>;
}

const ASSISTANTS: Service = {
  name: 'assistant',
  config: { client: 'openai-assistants', model: 'gpt-test', polling: { intervalMs: 5 } },
  channelType: 'openai-assistant-channel',
  eventsBeforeText: 7,
  failMarker: '[emulator:failed]',
  userTexts: async (emulator, _c, threadId) => {
    const out: string[] = [];
    for await (const m of rawClient(emulator).beta.threads.messages.list(threadId, { order: 'asc', limit: 100 })) {
      if (m.role === 'user') out.push(m.content.map((p) => (p.type === 'text' ? p.text.value : '')).join(''));
    }
    return out;
  },
};

const FOUNDRY: Service = {
  name: 'foundry',
  config: { client: 'azure-ai-agents', model: 'gpt-test' },
  channelType: 'foundry-channel',
  eventsBeforeText: 7,
  failMarker: '[run:failed]',
  userTexts: async (_e, container, threadId) => {
    const out: string[] = [];
    const client = (container.get(agentToken('foundry')) as AzureAIAgent).chatClient.client;
    for await (const m of client.messages.list(threadId, { order: 'asc' })) {
      if (m.role === 'user') out.push(m.content.map((p) => (p.type === 'text' ? (p as { text: { value: string } }).text.value : '')).join(''));
    }
    return out;
  },
};

/** The user messages of a stored Responses chain (walked back from its last response) or conversation. */
async function responsesUserTexts(emulator: Emulator, _c: Container, id: string): Promise<string[]> {
  const sdk = rawClient(emulator);
  const textOf = (item: { type?: string; role?: string; content?: unknown }): string | undefined => {
    if (item.type !== 'message' || item.role !== 'user') return undefined;
    return typeof item.content === 'string' ? item.content : (item.content as { text?: string }[]).map((p) => p.text ?? '').join('');
  };
  const out: string[] = [];
  if (id.startsWith('conv_')) {
    for await (const item of sdk.conversations.items.list(id, { order: 'asc' })) {
      const text = textOf(item as { type?: string; role?: string; content?: unknown });
      if (text !== undefined) out.push(text);
    }
    return out;
  }
  // Each response's input items, oldest response first, each item once by id: a server that lists
  // a response's whole context lists the earlier items again, one that lists only the request's
  // input does not; either way an item sent twice has two ids and shows twice.
  const turns: { id: string; text?: string }[][] = [];
  for (let current: string | null = id; current; ) {
    const turn: { id: string; text?: string }[] = [];
    for await (const item of sdk.responses.inputItems.list(current, { order: 'asc', limit: 100 })) {
      turn.push({ id: item.id, text: textOf(item as { type?: string; role?: string; content?: unknown }) });
    }
    turns.unshift(turn);
    current = (await sdk.responses.retrieve(current)).previous_response_id ?? null;
  }
  const seen = new Set<string>();
  for (const item of turns.flat()) {
    if (seen.has(item.id)) continue;
    seen.add(item.id);
    if (item.text !== undefined) out.push(item.text);
  }
  return out;
}

const RESPONSES_CHAIN: Service = {
  name: 'reviewer',
  config: { client: 'openai-responses', model: 'gpt-test' },
  channelType: 'openai-responses-channel',
  eventsBeforeText: 5,
  userTexts: responsesUserTexts,
};

const RESPONSES_CONVERSATION: Service = { ...RESPONSES_CHAIN, config: { client: 'openai-responses', model: 'gpt-test', conversation: true } };

interface Failure {
  title: string;
  /** Makes the service agent's next turn end badly; the chat stays usable. */
  fail: (ctx: { emulator: Emulator; chat: AgentGroupChat; agent: AIAgent; runPath: string; service: Service }) => Promise<void>;
  /** Appended to the user's message the failing turn receives (steers the emulated run). */
  marker?: (service: Service) => string;
}

const ABORTED_STREAM: Failure = {
  title: 'its streamed turn is aborted after the service took the queued messages',
  fail: async ({ emulator, chat, agent, runPath, service }) => {
    // The run starts, its reply begins to stream, then the stream stalls: the user gives up.
    emulator.injectFault({ kind: 'stall-stream', afterEvents: service.eventsBeforeText + 1, path: runPath, method: 'POST' });
    await new Promise<void>((resolve, reject) => {
      const subscription = chat.invokeStream({ agent }).subscribe({
        next: (update) => {
          if (!update.text) return;
          subscription.unsubscribe();
          resolve();
        },
        error: reject,
        complete: () => reject(new Error('the turn should not have completed')),
      });
    });
    expect(chat.isBusy).to.equal(false); // free at once: the caller goes on right after unsubscribing
  },
};

const ABORTED_BEFORE_SENDING: Failure = {
  title: 'its turn is aborted before the queued messages were sent',
  fail: async ({ emulator, chat, agent, runPath }) => {
    // The check for a run still active on the thread (GET runs) hangs; the caller aborts meanwhile.
    emulator.injectFault({ kind: 'latency', ms: 60_000, path: runPath, method: 'GET' });
    const before = emulator.requests.filter((r) => r.method === 'GET' && r.path === runPath).length;
    const controller = new AbortController();
    const turn = chat.invoke({ agent, signal: controller.signal }).catch((e: unknown) => e);
    await until(() => emulator.requests.filter((r) => r.method === 'GET' && r.path === runPath).length > before);
    controller.abort();
    expect(await turn).to.be.instanceOf(AbortError);
  },
};

const FAILED_RUN: Failure = {
  title: 'its run fails on the service after taking the queued messages',
  marker: (service) => ` ${service.failMarker!}`,
  fail: async ({ chat, agent }) => {
    const error = await chat.invoke({ agent }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(SkeinError);
    expect((error as Error).message).to.match(/fail/i);
  },
};

const LOST_REPLY: Failure = {
  title: 'the connection breaks after the service took the run request (network error on posting)',
  fail: async ({ emulator, chat, agent, runPath }) => {
    // The service handles the request, then the socket is destroyed before the reply gets out.
    emulator.injectFault({ kind: 'cut-stream', afterEvents: 0, path: runPath, method: 'POST' });
    expect(await chat.invoke({ agent }).catch((e: unknown) => e)).to.be.instanceOf(SkeinError);
  },
};

describe('AgentGroupChat: each chat message reaches a service thread exactly once', () => {
  let emulator: Emulator;
  /** How the emulator lists a Responses input_items (set per case). */
  let listing: ResponsesInputItemsListing | undefined;

  beforeEach(async () => {
    emulator = await Emulator.start({ responsesInputItems: listing });
  });
  afterEach(async () => emulator.stop());

  const build = (service: Service): Container =>
    createContainer({
      plugins: [
        openaiPlugin({ apiKey: 'test-key', baseURL: emulator.openaiBaseURL, maxRetries: 0 }),
        azureAIAgentsPlugin({ ...emulatorConnection(emulator.url, { clientOptions: { retryOptions: { maxRetries: 0 } } }), pollIntervalMs: 5 }),
      ],
      agents: { writer: { client: 'openai-chat', model: 'gpt-test' }, [service.name]: service.config },
    });

  /** Runs the scenario and returns the service thread's user messages and the chat's own. */
  async function scenario(service: Service, failure: Failure, resume: boolean): Promise<{ onThread: string[]; expected: string[]; reply: string }> {
    const container = build(service);
    let chat = AgentGroupChat.fromContainer(container, { agents: ['writer', service.name] });
    const named = (c: AgentGroupChat, name: string) => c.agents.find((a) => a.name === name)!;
    await chat.addChatMessage('My name is Ada');
    await chat.invoke(); // writer, then the service agent: its thread exists now
    const runPath = runPathOf(emulator, service, await threadIdOf(chat, service));

    await chat.addChatMessage(`I like otters${failure.marker?.(service) ?? ''}`);
    await chat.invoke({ agent: named(chat, 'writer') }); // two messages now wait for the service agent
    await failure.fail({ emulator, chat, agent: named(chat, service.name), runPath, service });

    if (resume) chat = await AgentGroupChat.deserialize(viaJson(await chat.serialize()), { container: build(service) });
    await chat.addChatMessage('what did we talk about');
    const [reply] = await chat.invoke({ agent: named(chat, service.name) });
    const history = await chat.getChatMessages();
    return {
      onThread: await service.userTexts(emulator, container, await threadIdOf(chat, service)),
      expected: history.filter((m) => m.authorName !== service.name).map(asSent),
      reply: messageText(reply!),
    };
  }

  const cases: [string, Service, Failure[], ResponsesInputItemsListing?][] = [
    ['Assistants', ASSISTANTS, [ABORTED_STREAM, ABORTED_BEFORE_SENDING, FAILED_RUN, LOST_REPLY]],
    ['Foundry', FOUNDRY, [ABORTED_STREAM, ABORTED_BEFORE_SENDING, FAILED_RUN, LOST_REPLY]],
    // Both ways a server lists a continuing response's input_items.
    ...RESPONSES_INPUT_ITEMS_LISTINGS.flatMap((l): [string, Service, Failure[], ResponsesInputItemsListing][] => [
      [`Responses (stored chain; input_items: ${l})`, RESPONSES_CHAIN, [ABORTED_STREAM, LOST_REPLY], l],
      [`Responses (conversation; input_items: ${l})`, RESPONSES_CONVERSATION, [ABORTED_STREAM, LOST_REPLY], l],
    ]),
  ];
  for (const [label, service, failures, inputItems] of cases) {
    describe(label, () => {
      before(() => {
        listing = inputItems;
      });
      after(() => {
        listing = undefined;
      });
      for (const failure of failures) {
        it(`when ${failure.title}`, async () => {
          const { onThread, expected, reply } = await scenario(service, failure, false);
          expect(expected).to.have.length(5);
          expect(onThread).to.deep.equal(expected);
          // The model saw each earlier message once, too.
          expect(reply.startsWith('We talked about: "My name is Ada"')).to.equal(true);
          expect(reply.split('"; "')).to.have.length(expected.length - 1);
        });
      }
      it('when the chat is serialized and resumed between the aborted turn and the next', async () => {
        const { onThread, expected } = await scenario(service, ABORTED_STREAM, true);
        expect(onThread).to.deep.equal(expected);
      });
    });
  }

  for (const service of [ASSISTANTS, FOUNDRY]) {
    it(`${service.channelType}: when the agent's very first run fails (its service thread was made in that turn)`, async () => {
      const container = build(service);
      const chat = AgentGroupChat.fromContainer(container, { agents: ['writer', service.name] });
      await chat.addChatMessage(`I like otters ${service.failMarker!}`); // the writer echoes it: the run fails
      const error = await chat.invoke().catch((e: unknown) => e);
      expect(error).to.be.instanceOf(SkeinError);
      expect((await chat.getChatMessages()).map((m) => m.authorName)).to.deep.equal([undefined, 'writer']);
      await chat.addChatMessage('what did we talk about');
      const [reply] = await chat.invoke({ agent: chat.agents[1]! });
      const history = await chat.getChatMessages();
      expect(await service.userTexts(emulator, container, await threadIdOf(chat, service))).to.deep.equal(
        history.filter((m) => m.authorName !== service.name).map(asSent),
      );
      expect(messageText(reply!).split('"; "')).to.have.length(2);
    });
  }

  it('saves the unsettled state with the chat and rejects a malformed one with a typed error naming the path', async () => {
    const container = build(ASSISTANTS);
    const chat = AgentGroupChat.fromContainer(container, { agents: ['writer', 'assistant'] });
    await chat.addChatMessage('My name is Ada');
    await chat.invoke();
    const runPath = runPathOf(emulator, ASSISTANTS, await threadIdOf(chat, ASSISTANTS));
    await chat.addChatMessage('I like otters');
    await chat.invoke({ agent: chat.agents[0]! });
    await ABORTED_STREAM.fail({ emulator, chat, agent: chat.agents[1]!, runPath, service: ASSISTANTS });
    const json = viaJson(await chat.serialize()) as { channels: { $type: string; unsettled?: unknown; known?: unknown }[] };
    const channel = json.channels.find((c) => c.$type === ASSISTANTS.channelType)!;
    expect(channel.unsettled).to.equal(true);
    channel.known = [42];
    const error = await AgentGroupChat.deserialize(json, { container: build(ASSISTANTS) }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(SkeinError);
    expect((error as { path?: string }).path).to.match(/^\$\.channels\[\d\]\.known\[0\]$/);
  });
});

/** A chat message's text as a service thread keeps it: other agents' words name their author. */
function asSent(m: ChatMessage): string {
  return m.authorName ? `[${m.authorName}]: ${messageText(m)}` : messageText(m);
}

async function threadIdOf(chat: AgentGroupChat, service: Service): Promise<string> {
  const json = (await chat.serialize()) as unknown as { channels: { $type: string; thread: { serviceThreadId?: string } }[] };
  return json.channels.find((c) => c.$type === service.channelType)!.thread.serviceThreadId!;
}

/** The path runs of the thread are created on (Responses: every response). */
function runPathOf(emulator: Emulator, service: Service, threadId: string): string {
  if (service.channelType === 'openai-responses-channel') return '/v1/responses';
  return emulator.requests.find((r) => r.method === 'POST' && r.path.endsWith(`/threads/${threadId}/runs`))!.path;
}

/** Waits for a condition the test cannot be told about (a request reaching the emulator). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
}
