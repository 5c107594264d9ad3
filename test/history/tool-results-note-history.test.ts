import type { AgentsClient } from '@azure/ai-agents';
import { expect } from 'chai';
import OpenAI from 'openai';
import {
  type AgentRunResponse,
  type AgentThread,
  type AIAgent,
  type AITool,
  type ChatMessage,
  approvalResponse,
  messageText,
  parseToolResultsNote,
  TOOL_RESULTS_NOTE_HEADING,
  toolResultsNote,
  namingCall,
  tool,
} from 'skein';
import { z } from 'zod';
import { AzureAIAgent, createEmulatorAgentsClient } from 'skein/azure-ai-agents';
import { OpenAIAssistantAgent } from 'skein/openai';
import { type ApprovalSuite, approvalSuite } from '../support/approval-suite.js';

/** What a reader of the history checks: each message's role and contents (no ids, times or markers). */
const shape = (messages: readonly ChatMessage[]) => messages.map((m) => ({ role: m.role, contents: m.contents }));

/** A service's raw thread messages, oldest first: role, text and metadata as the service keeps them. */
type RawMessages = (threadId: string) => Promise<{ role: string; text: string; metadata: Record<string, string> }[]>;

interface Service {
  name: string;
  start(suite: ApprovalSuite, extraTools?: AITool[]): Promise<{ agent: AIAgent; raw: RawMessages; continueAsIs: (thread: AgentThread) => Promise<AgentRunResponse> }>;
}

const assistants: Service = {
  name: 'OpenAI Assistants (real openai SDK)',
  async start(suite, extraTools = []) {
    const client = new OpenAI({ apiKey: 'emulator-key', baseURL: suite.emulator.openaiBaseURL, maxRetries: 0 });
    const agent = await OpenAIAssistantAgent.create(client, { model: 'gpt-test', name: 'ops' }, { tools: [...suite.tools(), ...extraTools], polling: { intervalMs: 1 } });
    const raw: RawMessages = async (threadId) =>
      (await client.beta.threads.messages.list(threadId, { order: 'asc' })).data.map((m) => ({
        role: m.role,
        text: m.content.map((c) => (c.type === 'text' ? c.text.value : '')).join(''),
        metadata: (m.metadata ?? {}) as Record<string, string>,
      }));
    return { agent, raw, continueAsIs: (thread) => agent.invoke(thread) };
  },
};

const foundry: Service = {
  name: 'Foundry Agents (real @azure/ai-agents SDK)',
  async start(suite, extraTools = []) {
    const client: AgentsClient = createEmulatorAgentsClient(suite.url, { token: 'emulator-key', clientOptions: { retryOptions: { maxRetries: 0 } } });
    const agent = new AzureAIAgent({ client, model: 'gpt-4o', name: 'ops', tools: [...suite.tools(), ...extraTools], pollIntervalMs: 1 });
    const raw: RawMessages = async (threadId) => {
      const out: { role: string; text: string; metadata: Record<string, string> }[] = [];
      for await (const m of client.messages.list(threadId, { order: 'asc' })) {
        out.push({ role: m.role, text: m.content.map((c) => (c.type === 'text' ? (c as { text: { value: string } }).text.value : '')).join(''), metadata: m.metadata ?? {} });
      }
      return out;
    };
    // A turn with no new input: the run reads the thread as it is.
    return { agent, raw, continueAsIs: (thread) => agent.run([], { thread }) };
  },
};

/** Issue 28 follow-up: history shows a tool results note as the calls and results it carries, never as a user message. */
for (const service of [assistants, foundry]) {
  describe(`history: a tool results note reads as function calls and results (${service.name}, emulator)`, () => {
    const suite = approvalSuite({ apiKey: 'emulator-key' });
    const { deleted, weatherCalls } = suite;
    beforeEach(() => {
      suite.emulator.runExpirySeconds = 0; // the waiting run expires before the answer comes
    });

    it('an approval answered after the waiting run expired: getMessages shows user / assistant (call) / tool (result) / assistant; forks at every index copy it so the model still reads the result', async () => {
      const { agent, raw, continueAsIs } = await service.start(suite);
      const thread = agent.getNewThread();
      const asked = await agent.run('call delete_file {"path":"/tmp/late"}', { thread });
      const { callId } = asked.approvalRequests[0]!;
      const approved = await agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread });
      expect(approved.text).to.equal('delete_file returned: deleted /tmp/late');

      // The service thread holds the note, marked by its metadata...
      const notes = (await raw(thread.serviceThreadId!)).filter((m) => m.metadata.skein_kind === 'tool-results');
      expect(notes.map((m) => [m.role, m.text.split('\n')[0]])).to.deep.equal([['user', TOOL_RESULTS_NOTE_HEADING]]);

      // ...history shows what it stands for.
      const history = await agent.getMessages(thread);
      expect(shape(history)).to.deep.equal([
        { role: 'user', contents: [{ kind: 'text', text: 'call delete_file {"path":"/tmp/late"}' }] },
        { role: 'assistant', contents: [{ kind: 'function-call', callId, name: 'delete_file', arguments: '{"path":"/tmp/late"}' }] },
        { role: 'tool', contents: [{ kind: 'function-result', callId, result: 'deleted /tmp/late' }] },
        { role: 'assistant', contents: [{ kind: 'text', text: 'delete_file returned: deleted /tmp/late' }] },
      ]);
      expect(history[1]!.additionalProperties).to.deep.equal({ skein_kind: 'tool-results' });
      expect(history[2]!.additionalProperties).to.deep.equal({ skein_kind: 'tool-results' });
      expect(history.some((m) => m.role === 'user' && messageText(m).startsWith('[tool results]'))).to.equal(false);
      expect(shape(await agent.getMessages(thread, { limit: 2, before: 3 }))).to.deep.equal(shape(history.slice(1, 3)));

      // A fork at each index: a cut on the call takes its result too; the origin is untouched.
      const expected = [1, 3, 3, 4];
      for (const [at, count] of expected.entries()) {
        const fork = await agent.forkThread(thread, { at });
        expect(shape(await agent.getMessages(fork)), `fork at ${at}`).to.deep.equal(shape(history.slice(0, count)));
        const copied = await raw(fork.serviceThreadId!);
        expect(copied.filter((m) => m.metadata.skein_kind === 'tool-results'), `fork at ${at}`).to.have.length(count >= 3 ? 1 : 0);
      }
      expect(shape(await agent.getMessages(thread))).to.deep.equal(shape(history));

      // A fork that ends with the result, continued: the model reads the result there.
      const fork = await agent.forkThread(thread, { at: 2 });
      expect((await continueAsIs(fork)).text).to.equal('delete_file returned: deleted /tmp/late');
      expect(deleted).to.deep.equal(['/tmp/late']);
    });

    it('a call that ran beside the approved one: both calls in one assistant message, both results in one tool message, paired by call id', async () => {
      const { agent } = await service.start(suite);
      const thread = agent.getNewThread();
      const asked = await agent.run('call get_weather {"city":"Bern"} and call delete_file {"path":"/tmp/b"}', { thread });
      await agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread });
      const history = await agent.getMessages(thread);
      expect(history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
      const calls = history[1]!.contents.map((c) => (c.kind === 'function-call' ? [c.name, c.arguments, c.callId] : []));
      const results = history[2]!.contents.map((c) => (c.kind === 'function-result' ? [c.callId, c.result] : []));
      expect(calls.map(([name, args]) => [name, args])).to.deep.equal([
        ['get_weather', '{"city":"Bern"}'],
        ['delete_file', '{"path":"/tmp/b"}'],
      ]);
      expect(results).to.deep.equal([
        [calls[0]![2], 'sunny in Bern'],
        [calls[1]![2], 'deleted /tmp/b'],
      ]);
      expect(weatherCalls).to.deep.equal(['Bern']);
    });

    it('an approved tool whose result carries an image and a file: the new run reads both through the note, which the service thread holds once', async () => {
      // What an MCP tool's image and file results look like to the model (see docs/mcp.md, Results).
      const chart = { content: [{ type: 'image', mimeType: 'image/png', bytes: 68 }, { type: 'resource_link', uri: 'file:///tmp/q3.pdf', name: 'q3.pdf', mimeType: 'application/pdf' }] };
      const renderChart = tool({ name: 'render_chart', description: 'Renders a chart', parameters: z.object({ quarter: z.string() }), requiresApproval: true, execute: () => chart });
      const { agent, raw } = await service.start(suite, [renderChart]);
      const thread = agent.getNewThread();
      const asked = await agent.run('call render_chart {"quarter":"Q3"}', { thread });
      const approved = await agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread });
      expect(approved.text).to.equal(`render_chart returned: ${JSON.stringify(chart)}`);
      expect((await raw(thread.serviceThreadId!)).filter((m) => m.metadata.skein_kind === 'tool-results')).to.have.length(1);
      expect(suite.deleted).to.deep.equal([]);
    });

    it('a rejected call reads back as its error result; a plain new message after a pending call keeps its place after the result', async () => {
      const { agent } = await service.start(suite);
      const thread = agent.getNewThread();
      const asked = await agent.run('call delete_file {"path":"/etc/passwd"}', { thread });
      await agent.run(approvalResponse(asked.approvalRequests[0]!, false, 'not that one'), { thread });
      await agent.run('call delete_file {"path":"/tmp/c"}', { thread });
      await agent.run('my name is Ada', { thread });
      const history = await agent.getMessages(thread);
      expect(history.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'user', 'assistant']);
      expect(history[2]!.contents).to.deep.equal([{ kind: 'function-result', callId: asked.approvalRequests[0]!.callId, error: 'not run: the user rejected this call: not that one.' }]);
      expect(history[6]!.contents[0]).to.include({ kind: 'function-result', error: 'not run: the user did not approve this call before sending a new message.' });
      expect(messageText(history[7]!)).to.equal('my name is Ada');
      expect(deleted).to.deep.equal([]);
    });
  });
}

describe('toolResultsNote / parseToolResultsNote', () => {
  it('reads back every entry whole: multi-line results and errors, unnamed calls', () => {
    const named = (callId: string, name: string, args: string, outcome: { result: string } | { error: string }) =>
      namingCall({ kind: 'function-result', callId, ...outcome }, { name, arguments: args });
    const note = toolResultsNote([
      named('call_1', 'read_file', '{"path":"a.txt"}', { result: 'line one\nline two\n- not an entry' }),
      named('call_2', 'delete_file', '{"path":"/"}', { error: 'not run: the user rejected this call: no.' }),
      { kind: 'function-result', callId: 'call_3', result: 'ok' },
    ]);
    expect(parseToolResultsNote(note)).to.deep.equal([
      { callId: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}', result: 'line one\nline two\n- not an entry' },
      { callId: 'call_2', name: 'delete_file', arguments: '{"path":"/"}', error: 'not run: the user rejected this call: no.' },
      { callId: 'call_3', arguments: '', result: 'ok' },
    ]);
    expect(parseToolResultsNote('call delete_file {}')).to.equal(undefined);
  });
});
