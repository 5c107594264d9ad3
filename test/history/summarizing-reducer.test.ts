import { expect } from 'chai';
import {
  ChatAgent,
  ConfigurationError,
  HISTORY_SUMMARY_STATE,
  SummarizingReducer,
  agentToken,
  createContainer,
  type AIAgent,
  type ChatMessage,
  type HistorySummaryState,
} from 'skein';
import { OpenAIChatClient, openaiPlugin } from 'skein/openai';
import { emulatorPerTest } from '../support/emulator.js';

interface Body {
  messages: { role: string; content: string | null; tool_calls?: { id: string }[]; tool_call_id?: string }[];
}

const filler = 'lorem ipsum dolor sit amet '.repeat(4);
function longConversation(turns: number): ChatMessage[] {
  const out: ChatMessage[] = [{ role: 'user', contents: [{ kind: 'text', text: 'my name is Zed' }] }, { role: 'assistant', contents: [{ kind: 'text', text: 'Nice to meet you, Zed!' }] }];
  for (let i = 1; i < turns; i++) {
    out.push({ role: 'user', contents: [{ kind: 'text', text: `note ${i}: ${filler}` }] });
    out.push({ role: 'assistant', contents: [{ kind: 'text', text: `noted ${i}` }] });
  }
  return out;
}

describe('history: SummarizingReducer (compaction, Chat Completions on the emulator)', function () {
  this.timeout(60_000);
  const running = emulatorPerTest();

  const bodies = () => running.emulator.requestsTo('/v1/chat/completions').map((r) => r.body as Body);
  const config = () => ({
    plugins: [openaiPlugin({ apiKey: 'k', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 })],
    agents: { bot: { client: 'openai-chat', model: 'emu', instructions: 'Be brief.', history: { summarize: { maxMessages: 20, keep: 10 } } } },
  });

  it('compacts a 1,000-message conversation with every request bounded; the stored history stays complete; the summary survives a resume and is not recomputed', async () => {
    const agent = createContainer(config()).get<AIAgent>(agentToken('bot'));
    const thread = agent.getNewThread();
    await thread.messageStore!.addMessages(longConversation(500));
    const fullSize = JSON.stringify(await thread.messageStore!.listMessages()).length;
    expect(await agent.getMessages(thread)).to.have.length(1000);

    await agent.run('what is my name?', { thread });
    const sent = bodies();
    expect(sent.length, 'summarized in bounded steps, then the turn').to.be.greaterThan(40);
    for (const body of sent) {
      expect(body.messages.length).to.be.at.most(23);
      expect(JSON.stringify(body).length).to.be.lessThan(12_000);
    }
    expect(fullSize).to.be.greaterThan(60_000);
    expect(sent[0]!.messages.at(-1)!.content, 'the first step summarizes the oldest messages').to.contain('user: my name is Zed');
    expect(sent[1]!.messages.at(-1)!.content, 'each next step starts from the previous summary').to.contain('Previous summary:');
    const turn = sent.at(-1)!;
    expect(turn.messages[0]).to.deep.include({ role: 'system', content: 'Be brief.' });
    expect(turn.messages[1]!.role).to.equal('system');
    expect(turn.messages[1]!.content).to.contain('Summary of the earlier conversation');
    expect(turn.messages.at(-1)).to.deep.include({ role: 'user', content: 'what is my name?' });

    expect(await agent.getMessages(thread), 'the stored history is never changed').to.have.length(1002);
    const summary = thread.state[HISTORY_SUMMARY_STATE] as unknown as HistorySummaryState;
    expect(summary.covers).to.be.within(990, 1000);

    // Another process resumes the thread: the summary comes with it, and a turn that stays
    // under the threshold sends one request (no summarization).
    const other = createContainer(config()).get<AIAgent>(agentToken('bot'));
    const resumed = await other.deserializeThread(JSON.parse(JSON.stringify(await thread.serialize())));
    const before = bodies().length;
    await other.run('and again?', { thread: resumed });
    expect(bodies().length - before).to.equal(1);
    expect(bodies().at(-1)!.messages[1]!.content).to.equal(turn.messages[1]!.content as string);
    expect((resumed.state[HISTORY_SUMMARY_STATE] as unknown as HistorySummaryState).covers).to.equal(summary.covers);
  });

  it('never splits a tool call from its result at the cut', async () => {
    const chatClient = new OpenAIChatClient({ apiKey: 'k', baseURL: running.emulator.openaiBaseURL, model: 'emu', maxRetries: 0 });
    const agent = new ChatAgent({ chatClient, chatReducer: new SummarizingReducer({ maxMessages: 6, keep: 3 }) });
    const thread = agent.getNewThread();
    const call = (id: string): ChatMessage => ({ role: 'assistant', contents: [{ kind: 'function-call', callId: id, name: 'lookup', arguments: '{}' }] });
    const result = (id: string): ChatMessage => ({ role: 'tool', contents: [{ kind: 'function-result', callId: id, result: 'ok' }] });
    const user = (t: string): ChatMessage => ({ role: 'user', contents: [{ kind: 'text', text: t }] });
    const assistant = (t: string): ChatMessage => ({ role: 'assistant', contents: [{ kind: 'text', text: t }] });
    // The newest 3 would start at result c2: the cut moves to before call c2.
    await thread.messageStore!.addMessages([user('a'), assistant('A'), user('b'), assistant('B'), user('c'), call('c1'), result('c1'), call('c2'), result('c2'), assistant('C')]);
    await agent.run('d', { thread });
    const turn = bodies().at(-1)!;
    const answered = new Set(turn.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id ?? ''));
    const called = new Set(turn.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
    expect([...answered].every((id) => called.has(id)), 'every result has its call').to.equal(true);
    expect([...called].every((id) => answered.has(id)), 'every call has its result').to.equal(true);
    expect(turn.messages[0]!.content).to.contain('Summary of the earlier conversation');
    expect(turn.messages[1]!.tool_calls, 'the kept part starts at the call').to.have.length(1);
  });

  it('a failed summarization falls back to the newest maxMessages and never fails the turn', async () => {
    const chatClient = new OpenAIChatClient({ apiKey: 'k', baseURL: running.emulator.openaiBaseURL, model: 'emu', maxRetries: 0 });
    const down = new OpenAIChatClient({ apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1', model: 'emu', maxRetries: 0 });
    const agent = new ChatAgent({ chatClient, chatReducer: new SummarizingReducer({ maxMessages: 10, keep: 4, chatClient: down }) });
    const thread = agent.getNewThread();
    await thread.messageStore!.addMessages(longConversation(20));
    const reply = await agent.run('hello?', { thread });
    expect(reply.text).to.not.equal('');
    const turn = bodies().at(-1)!;
    expect(turn.messages.length).to.be.at.most(11);
    expect(turn.messages.some((m) => String(m.content).includes('Summary'))).to.equal(false);
    expect(thread.state[HISTORY_SUMMARY_STATE]).to.equal(undefined);
    expect(await agent.getMessages(thread)).to.have.length(42);
  });

  it('a fork cut before the summarized point drops the summary; one after keeps it', async () => {
    const agent = createContainer(config()).get<AIAgent>(agentToken('bot'));
    const thread = agent.getNewThread();
    await thread.messageStore!.addMessages(longConversation(20));
    await agent.run('hi', { thread });
    const covers = (thread.state[HISTORY_SUMMARY_STATE] as unknown as HistorySummaryState).covers;
    expect((await agent.forkThread(thread, { at: 3 })).state[HISTORY_SUMMARY_STATE]).to.equal(undefined);
    expect((await agent.forkThread(thread)).state[HISTORY_SUMMARY_STATE]).to.deep.include({ covers });
  });

  it('rejects a bad summarize config with a ConfigurationError naming the field', () => {
    const bad = { ...config(), agents: { bot: { client: 'openai-chat', model: 'emu', history: { summarize: { maxMessages: 5, keep: 5 } } } } };
    expect(() => createContainer(bad)).to.throw(ConfigurationError, /history/);
  });

});
