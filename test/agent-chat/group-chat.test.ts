import { expect } from 'chai';
import type { Container } from 'inversify';
import { lastValueFrom, toArray } from 'rxjs';
import {
  AgentApprovalTermination,
  AgentGroupChat,
  CHAT_HISTORY_CHANNEL_KEY,
  ChatBusyError,
  MaxTurnsTermination,
  ModelSelectionStrategy,
  PredicateTermination,
  SerializationError,
  ServiceError,
  messageText,
} from 'skein';
import { RESPONSES_INPUT_ITEMS_LISTINGS } from 'skein/testing';
import { emulatorPerTest } from '../support/emulator.js';
import { agent, bodies, containerFor, rawClient, texts, THREE_AGENTS, viaJson } from './fixture.js';

// Both ways a server lists a continuing response's input_items (the Responses agent's history is read from them).
for (const listing of RESPONSES_INPUT_ITEMS_LISTINGS) describe(`AgentGroupChat: agents of different thread kinds in one conversation (Responses input_items: ${listing})`, () => {
  let container: Container;

  const running = emulatorPerTest({ responsesInputItems: listing });
  beforeEach(() => {
    container = containerFor(running.emulator);
  });

  const threeAgentChat = (c: Container = container) => AgentGroupChat.fromContainer(c, { agents: ['writer', 'reviewer', 'assistant'] });

  it('lets a Chat Completions, a Responses and an Assistants agent take turns, each seeing what the others said', async () => {
    const chat = threeAgentChat();
    await chat.addChatMessage('Tell me about otters');
    const produced = await chat.invoke();

    expect(produced.map((m) => m.authorName)).to.deep.equal(['writer', 'reviewer', 'assistant']);
    const [w, r, a] = texts(produced) as [string, string, string];
    expect(w).to.equal('You said: "Tell me about otters" (I have seen 1 earlier messages.)');
    // Each agent's last input is the previous agent's reply, as a user turn by someone else.
    // Responses input has no `name`: the writer's words arrive attributed in the text.
    expect(r).to.equal(`You said: "[writer]: ${w}" (I have seen 2 earlier messages.)`);
    expect(a.startsWith(`You said: "[reviewer]: ${r}" (I have seen`)).to.equal(true);

    // What the Responses channel sent: the user's and the writer's words as user input.
    const responsesInput = bodies(running.emulator, '/v1/responses').at(-1)!.input as { role: string; content: unknown }[];
    expect(responsesInput.map((i) => i.role)).to.deep.equal(['user', 'user']);
    expect(JSON.stringify(responsesInput)).to.include('Tell me about otters');

    await chat.addChatMessage('what did we talk about');
    const [writerAnswer] = await chat.invoke({ agent: agent(container, 'writer') });
    expect(messageText(writerAnswer!)).to.equal(`We talked about: "Tell me about otters"; "${r}"; "${a}"`);
    const sent = bodies(running.emulator, '/v1/chat/completions').at(-1)!.messages as { role: string }[];
    expect(sent.map((m) => m.role)).to.deep.equal(['system', 'user', 'assistant', 'user', 'user', 'user']);

    await chat.addChatMessage('what did we talk about');
    const [assistantAnswer] = await chat.invoke({ agent: agent(container, 'assistant') });
    expect(messageText(assistantAnswer!)).to.equal(
      `We talked about: "Tell me about otters"; "[writer]: ${w}"; "[reviewer]: ${r}"; "what did we talk about"; "[writer]: ${messageText(writerAnswer!)}"`,
    );

    const all = ['Tell me about otters', w, r, a, 'what did we talk about', messageText(writerAnswer!), 'what did we talk about', messageText(assistantAnswer!)];
    expect(texts(await chat.getChatMessages())).to.deep.equal(all);
    // Service channels read their history back from the service: the assistant thread, the stored response chain.
    expect(texts(await chat.getChatMessages(agent(container, 'assistant')))).to.deep.equal(all);
    const chain = texts(await chat.getChatMessages(agent(container, 'reviewer')));
    expect(chain).to.deep.equal(all); // its stored chain (otters, w, r) plus what waits for its next turn
  });

  it('catches the Responses channel up from its stored chain with every message once, however many turns it took', async () => {
    const chat = AgentGroupChat.fromContainer(container, { agents: ['writer', 'reviewer'] });
    for (const said of ['My name is Ada', 'I like otters', 'what did we talk about']) {
      await chat.addChatMessage(said);
      await chat.invoke();
    }
    const all = texts(await chat.getChatMessages());
    expect(all).to.have.length(9);
    const caughtUp = await chat.getChatMessages(agent(container, 'reviewer'));
    expect(texts(caughtUp)).to.deep.equal(all);
    const ids = caughtUp.flatMap((m) => (m.messageId === undefined ? [] : [m.messageId]));
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('shares one channel between two message-store agents and one between two assistants on the same service', async () => {
    const c = containerFor(running.emulator, {
      ...THREE_AGENTS,
      editor: { client: 'openai-chat', model: 'gpt-test' },
      helper: { client: 'openai-assistants', model: 'gpt-test', polling: { intervalMs: 5 } },
    });
    const chat = AgentGroupChat.fromContainer(c, { agents: ['writer', 'editor', 'assistant', 'helper'] });
    expect(chat.channelKey(agent(c, 'writer'))).to.equal(CHAT_HISTORY_CHANNEL_KEY).and.equal(chat.channelKey(agent(c, 'editor')));
    const key = chat.channelKey(agent(c, 'assistant'));
    expect(key).to.equal(chat.channelKey(agent(c, 'helper'))).and.not.include('test-key');
    await chat.addChatMessage('My name is Bo');
    await chat.invoke();
    const threads = bodies(running.emulator, '/v1/threads');
    expect(threads).to.have.length(1); // one assistant thread for both assistants
    expect(await chat.getChatMessages(agent(c, 'writer'))).to.deep.equal(await chat.getChatMessages(agent(c, 'editor')));
    // The editor saw the writer's reply as its last input.
    expect(texts(await chat.getChatMessages()).at(2)).to.equal('You said: "Nice to meet you, Bo!" (I have seen 1 earlier messages.)');
  });

  it('rotates agents in order, stops after max turns, and continues the rotation on the next invoke', async () => {
    const chat = AgentGroupChat.fromContainer(container, { agents: ['writer', 'reviewer'], termination: new MaxTurnsTermination(3) });
    await chat.addChatMessage('hello');
    expect((await chat.invoke()).map((m) => m.authorName)).to.deep.equal(['writer', 'reviewer', 'writer']);
    expect((await chat.invoke()).map((m) => m.authorName)).to.deep.equal(['reviewer', 'writer', 'reviewer']);
  });

  it('stops when a predicate says so, and never runs past the hard turn cap', async () => {
    const chat = AgentGroupChat.fromContainer(container, {
      agents: ['writer', 'reviewer'],
      termination: new PredicateTermination(({ produced }) => produced.some((m) => messageText(m).includes('I have seen 3'))),
    });
    await chat.addChatMessage('hello');
    const produced = await chat.invoke();
    const seen = produced.map((m) => messageText(m));
    expect(seen.at(-1)).to.include('I have seen 3');
    expect(seen.slice(0, -1).some((t) => t.includes('I have seen 3'))).to.equal(false);
    expect(produced.length).to.be.lessThan(20);

    const capped = AgentGroupChat.fromContainer(container, { agents: ['writer', 'reviewer'], termination: new PredicateTermination(() => false), maxTurns: 5 });
    await capped.addChatMessage('hello');
    expect(await capped.invoke()).to.have.length(5);
  });

  it('asks a model which agent speaks next', async () => {
    const selector = agent(containerFor(running.emulator, { selector: { client: 'openai-chat', model: 'gpt-test' } }), 'selector');
    const fallbacks: string[] = [];
    const chat = AgentGroupChat.fromContainer(container, {
      agents: ['writer', 'reviewer', 'assistant'],
      // The emulated model answers "My name is X" with "Nice to meet you, X!": a reply naming one agent.
      selection: new ModelSelectionStrategy({
        selector,
        prompt: (_agents, history) => (history.length < 2 ? 'My name is assistant' : history.length < 3 ? 'My name is reviewer' : 'nobody in particular'),
        onFallback: (reply, chosen) => fallbacks.push(`${reply} -> ${chosen.name}`),
      }),
      termination: new MaxTurnsTermination(3),
    });
    await chat.addChatMessage('hello');
    const produced = await chat.invoke();
    expect(produced.map((m) => m.authorName)).to.deep.equal(['assistant', 'reviewer', 'assistant']);
    expect(fallbacks).to.have.length(1);
    expect(fallbacks[0]).to.match(/-> assistant$/); // the reply named nobody: sequential after the reviewer
    // The selector saw the transcript before its question.
    const selectorCalls = bodies(running.emulator, '/v1/chat/completions').filter((b) => JSON.stringify(b.messages).includes('My name is reviewer'));
    const seenBySelector = (selectorCalls[0]!.messages as { content: string }[]).map((m) => m.content);
    expect(seenBySelector).to.include('hello').and.include(messageText(produced[0]!));
  });

  it('stops when the approval agent approves, judging only the chosen agents\' turns', async () => {
    const judge = agent(containerFor(running.emulator, { judge: { client: 'openai-chat', model: 'gpt-test', instructions: 'Say LGTM when it is good.' } }), 'judge');
    const chat = AgentGroupChat.fromContainer(container, {
      agents: ['writer', 'reviewer'],
      termination: new AgentApprovalTermination({
        judge,
        judgedAgents: [agent(container, 'reviewer')],
        prompt: false,
        approves: (reply) => reply.includes('LGTM'),
      }),
    });
    await chat.addChatMessage('Please answer LGTM');
    const produced = await chat.invoke();
    expect(produced.map((m) => m.authorName)).to.deep.equal(['writer', 'reviewer']);
    const judged = bodies(running.emulator, '/v1/chat/completions').filter((b) => JSON.stringify(b.messages).includes('Say LGTM'));
    expect(judged).to.have.length(1);

    const never = AgentGroupChat.fromContainer(container, {
      agents: ['writer', 'reviewer'],
      termination: new AgentApprovalTermination({ judge, prompt: false, approves: (reply) => reply.includes('LGTM') }),
      maxTurns: 3,
    });
    await never.addChatMessage('hello');
    expect(await never.invoke()).to.have.length(3);
  });

  it('rejects a second invocation while one runs, with a typed error, and loses nothing', async () => {
    const chat = threeAgentChat();
    await chat.addChatMessage('My name is Ada');
    const first = chat.invoke();
    const second = await chat.invoke().catch((e: unknown) => e);
    expect(second).to.be.instanceOf(ChatBusyError);
    expect(await chat.addChatMessage('late').catch((e: unknown) => e)).to.be.instanceOf(ChatBusyError);
    const streamed = await lastValueFrom(chat.invokeStream()).catch((e: unknown) => e);
    expect(streamed).to.be.instanceOf(ChatBusyError);
    expect(await first).to.have.length(3);
    expect(chat.isBusy).to.equal(false);
    expect(texts(await chat.getChatMessages())).to.have.length(4);
    expect(await chat.invoke()).to.have.length(3); // free again
  });

  it('streams every agent\'s updates tagged with the author, and records the same messages', async () => {
    const chat = threeAgentChat();
    await chat.addChatMessage('My name is Ada');
    const updates = await lastValueFrom(chat.invokeStream().pipe(toArray()));
    const authors = [...new Set(updates.filter((u) => u.text).map((u) => u.authorName))];
    expect(authors).to.deep.equal(['writer', 'reviewer', 'assistant']);
    const byAuthor = (name: string) => updates.filter((u) => u.authorName === name).map((u) => u.text).join('');
    const history = await chat.getChatMessages();
    expect(history.slice(1).map((m) => [m.authorName, messageText(m)])).to.deep.equal([
      ['writer', byAuthor('writer')],
      ['reviewer', byAuthor('reviewer')],
      ['assistant', byAuthor('assistant')],
    ]);
    expect(byAuthor('reviewer')).to.equal('You said: "[writer]: Nice to meet you, Ada!" (I have seen 2 earlier messages.)');
  });

  it('serializes mid-chat, resumes in a new container and continues where it stopped', async () => {
    const chat = threeAgentChat();
    await chat.addChatMessage('My name is Ada');
    const before = await chat.invoke();
    const json = viaJson(await chat.serialize());
    expect(JSON.stringify(json)).to.not.include('test-key');
    const threadId = (json as { channels: { thread?: { serviceThreadId?: string } }[] }).channels.map((c) => c.thread?.serviceThreadId);
    expect(threadId.filter((id) => id?.startsWith('thread_'))).to.have.length(1);

    const other = containerFor(running.emulator); // "another process"
    const resumed = await AgentGroupChat.deserialize(json, { container: other });
    expect(texts(await resumed.getChatMessages())).to.deep.equal(['My name is Ada', ...texts(before)]);
    await resumed.addChatMessage('what did we talk about');
    const after = await resumed.invoke();
    expect(after.map((m) => m.authorName)).to.deep.equal(['writer', 'reviewer', 'assistant']);
    expect(messageText(after[0]!)).to.equal(`We talked about: "My name is Ada"; "${messageText(before[1]!)}"; "${messageText(before[2]!)}"`);
    // The assistant continued the same assistant thread, the reviewer the same chain.
    const runs = running.emulator.requests.filter((r) => r.method === 'POST' && /\/threads\/[^/]+\/runs$/.test(r.path));
    expect(new Set(runs.map((r) => r.path))).to.have.length(1);
    const lastResponse = bodies(running.emulator, '/v1/responses').at(-1)!;
    expect(lastResponse.previous_response_id).to.be.a('string');
  });

  it('rejects bad state with a typed error naming the path', async () => {
    const chat = threeAgentChat();
    await chat.addChatMessage('hi');
    const json = viaJson(await chat.serialize()) as { channels: { $type: string }[] };
    const unknownType = structuredClone(json);
    unknownType.channels[0]!.$type = 'no-such-channel';
    const error = await AgentGroupChat.deserialize(unknownType, { container }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(SerializationError);
    expect((error as SerializationError).path).to.equal('$.channels[0].$type');
    expect((error as Error).message).to.include('openai-assistant-channel');
    const polluted = JSON.parse(JSON.stringify(json).replace('"messages":[', '"messages":[{"__proto__":{"x":1},"role":"user","contents":[]},')) as unknown;
    expect(await AgentGroupChat.deserialize(polluted, { container }).catch((e: unknown) => e)).to.be.instanceOf(SerializationError);
    const wrongKey = containerFor(new URL(running.emulator.openaiBaseURL).port === '1' ? running.emulator : running.emulator, THREE_AGENTS);
    expect(await AgentGroupChat.deserialize({ ...json, $type: 'thread' }, { container: wrongKey }).catch((e: unknown) => e)).to.be.instanceOf(SerializationError);
    const newerChannel = structuredClone(json) as unknown as { channels: { version: number }[] };
    newerChannel.channels[1]!.version = 2;
    const versionError = (await AgentGroupChat.deserialize(newerChannel, { container }).catch((e: unknown) => e)) as SerializationError;
    expect(versionError).to.be.instanceOf(SerializationError);
    expect(versionError.path).to.equal('$.channels[1].version');
    const newerChat = { ...(json as object), version: 7 };
    const chatVersionError = (await AgentGroupChat.deserialize(newerChat, { container }).catch((e: unknown) => e)) as SerializationError;
    expect(chatVersionError.path).to.equal('$.version');
    expect(chatVersionError.message).to.include('version 7');
  });

  it('leaves every channel consistent when an agent fails mid-chat, and goes on after', async () => {
    const chat = threeAgentChat();
    await chat.addChatMessage('My name is Ada');
    running.emulator.injectFault({ kind: 'status', status: 500, path: '/v1/responses' });
    const error = await chat.invoke().catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ServiceError);
    // The writer's turn landed; the reviewer's did not, and nobody heard of it.
    expect((await chat.getChatMessages()).map((m) => m.authorName ?? 'user')).to.deep.equal(['user', 'writer']);
    expect(texts(await chat.getChatMessages(agent(container, 'reviewer')))).to.deep.equal(['My name is Ada', 'Nice to meet you, Ada!']);
    expect(chat.isBusy).to.equal(false);
    // The rotation resumes with the reviewer, which gets what it missed.
    const produced = await chat.invoke({ agent: agent(container, 'reviewer') });
    expect(messageText(produced[0]!)).to.equal('You said: "[writer]: Nice to meet you, Ada!" (I have seen 2 earlier messages.)');
  });

  it('reset clears every channel and deletes the service threads the chat made', async () => {
    const chat = threeAgentChat();
    await chat.addChatMessage('My name is Ada');
    await chat.invoke();
    const json = (await chat.serialize()) as unknown as { channels: { $type: string; thread?: { serviceThreadId?: string } }[] };
    const ids = Object.fromEntries(json.channels.map((c) => [c.$type, c.thread?.serviceThreadId]));
    const client = rawClient(running.emulator);
    await chat.reset();
    expect(await chat.getChatMessages()).to.deep.equal([]);
    for (const a of ['writer', 'reviewer', 'assistant']) expect(await chat.getChatMessages(agent(container, a))).to.deep.equal([]);
    expect(await client.beta.threads.retrieve(ids['openai-assistant-channel']!).catch((e: { status?: number }) => e.status)).to.equal(404);
    expect(await client.responses.retrieve(ids['openai-responses-channel']!).catch((e: { status?: number }) => e.status)).to.equal(404);
    // And the chat starts over.
    await chat.addChatMessage('what did we talk about');
    const [first] = await chat.invoke({ agent: agent(container, 'assistant') });
    expect(messageText(first!)).to.equal('We have not talked about anything yet.');
  });
});
