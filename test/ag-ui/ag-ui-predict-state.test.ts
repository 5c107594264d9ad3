import type { BaseEvent } from '@ag-ui/core';
import { expect } from 'chai';
import { type AIAgent, ConfigurationError, agentToken, createContainer, tool } from 'skein';
import { AgUiServer, type AgUiPredictState, agUiStateOf, parsePartialJson, setAgUiState } from 'skein/ag-ui';
import { openaiPlugin } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { z } from 'zod';
import { HttpAgent, lastText, runVerified, say, types, writeDocumentTool } from './ag-ui-fixture.js';

/** One writer agent per kind: Chat Completions, Responses, Assistants. */
const WRITERS = ['writer', 'writer-responses', 'writer-assistants'] as const;
type Writer = (typeof WRITERS)[number];
const DOCUMENT = 'Once upon a time there was a dog named "Rex", who ran — fast.';

describe('skein/ag-ui: predictive state updates and steps', () => {
  let emulator: Emulator;
  let agents: Record<Writer, AIAgent>;
  let close: () => Promise<void>;
  let server: AgUiServer;
  let base: string;
  const written: string[] = [];
  const rules: AgUiPredictState[] = [
    { stateKey: 'document', tool: 'write_document', toolArgument: 'document' },
    { stateKey: 'title', tool: 'write_title', toolArgument: 'title' },
    { stateKey: 'published', tool: 'publish', toolArgument: 'text' },
  ];

  before(async () => {
    emulator = await Emulator.start();
    const container = await createContainer({
      plugins: [openaiPlugin({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 })],
      tools: [
        writeDocumentTool(written),
        // This tool writes its state key itself: that value stands, not the predicted one.
        tool({
          name: 'write_title',
          description: 'Sets the title',
          parameters: z.object({ title: z.string() }),
          execute: ({ title }, { thread }) => {
            setAgUiState(thread!, { ...((agUiStateOf(thread!) ?? {}) as object), title: title.toUpperCase() });
            return 'titled';
          },
        }),
        tool({ name: 'publish', description: 'Publishes a text', parameters: z.object({ text: z.string() }), requiresApproval: true, execute: ({ text }) => `published ${text}` }),
      ],
      agents: {
        writer: { client: 'openai-chat', model: 'gpt-4.1', tools: ['write_document', 'write_title', 'publish'] },
        'writer-responses': { client: 'openai-responses', model: 'gpt-4.1', tools: ['write_document', 'write_title', 'publish'] },
        'writer-assistants': { client: 'openai-assistants', model: 'gpt-4.1', instructions: 'Write.', polling: { intervalMs: 1 }, tools: ['write_document', 'write_title', 'publish'] },
      },
    });
    agents = Object.fromEntries(WRITERS.map((name) => [name, container.get<AIAgent>(agentToken(name))])) as Record<Writer, AIAgent>;
    close = () => container.unbindAllAsync();
    server = new AgUiServer({
      agents: { ...Object.fromEntries(WRITERS.map((name) => [name, { agent: agents[name], predictState: rules }])), plain: agents.writer },
      logger: { warn: () => undefined, error: () => undefined },
    });
    base = `${await server.listen()}/agents`;
  });
  after(async () => {
    await server.close();
    await close();
    await emulator.stop();
  });

  it('parsePartialJson: every prefix of a tool call\'s arguments predicts a prefix of the final value', () => {
    const args = JSON.stringify({ document: `${DOCUMENT} \u00e9\\`, n: 12, tags: ['a', 'b'] });
    let previous = '';
    for (let i = 0; i <= args.length; i++) {
      const value = parsePartialJson(args.slice(0, i)) as { document?: string } | undefined;
      if (value === undefined) {
        expect(i, `prefix ${JSON.stringify(args.slice(0, i))}`).to.equal(0);
        continue;
      }
      expect(value, `prefix ${JSON.stringify(args.slice(0, i))}`).to.be.an('object');
      const document = value.document ?? '';
      expect(`${DOCUMENT} \u00e9\\`.startsWith(document), `prefix ${JSON.stringify(args.slice(0, i))} gave ${JSON.stringify(document)}`).to.equal(true);
      expect(document.length).to.be.at.least(previous.length);
      previous = document;
    }
    expect(parsePartialJson(args)).to.deep.equal({ document: `${DOCUMENT} \u00e9\\`, n: 12, tags: ['a', 'b'] });
    expect(parsePartialJson('{"a":1,"b":tr')).to.deep.equal({ a: 1 });
    expect(parsePartialJson('{"a":[1,{"b":"x')).to.deep.equal({ a: [1, { b: 'x' }] });
    expect(parsePartialJson('')).to.equal(undefined);
  });

  for (const name of WRITERS) {
    it(`${name}: a watched call's argument streams into the state as JSON Patch deltas, in order; after the tool runs the state holds it`, async () => {
      const agent = new HttpAgent({ url: `${base}/${name}`, initialState: { theme: 'dark' } });
      const { events } = await say(agent, `call write_document ${JSON.stringify({ document: DOCUMENT })}`);
      const t = types(events);
      // Announced the way front ends expect, before any tool call.
      const custom = events.find((e) => e.type === 'CUSTOM') as BaseEvent & { name?: string; value?: unknown };
      expect(custom).to.deep.include({ name: 'PredictState' });
      expect(custom.value).to.deep.equal([
        { state_key: 'document', tool: 'write_document', tool_argument: 'document' },
        { state_key: 'title', tool: 'write_title', tool_argument: 'title' },
        { state_key: 'published', tool: 'publish', tool_argument: 'text' },
      ]);
      expect(t.indexOf('CUSTOM')).to.be.lessThan(t.indexOf('TOOL_CALL_START'));
      // The deltas come while the arguments stream, between the call's start and end, each a longer prefix.
      const start = t.indexOf('TOOL_CALL_START');
      const end = t.indexOf('TOOL_CALL_END');
      const predicted = events
        .map((e, i) => ({ e, i }))
        .filter(({ e }) => e.type === 'STATE_DELTA')
        .map(({ e, i }) => ({ i, ops: (e as BaseEvent & { delta: { op: string; path: string; value?: unknown }[] }).delta }));
      const during = predicted.filter(({ i }) => i > start && i < end);
      expect(during.length, 'deltas while the arguments stream').to.be.greaterThan(2);
      let previous = '';
      for (const { ops } of during) {
        expect(ops).to.have.length(1);
        expect(ops[0]!.path).to.equal('/document');
        expect(ops[0]!.op).to.equal(previous === '' ? 'add' : 'replace');
        const value = ops[0]!.value as string;
        expect(DOCUMENT.startsWith(value), JSON.stringify(value)).to.equal(true);
        expect(value.length).to.be.greaterThan(previous.length);
        previous = value;
      }
      expect(previous).to.equal(DOCUMENT);
      expect(written.at(-1)).to.equal(DOCUMENT);
      expect(agent.state).to.deep.equal({ theme: 'dark', document: DOCUMENT });
      // Stored with the thread: a new page gets it.
      const page = new HttpAgent({ url: `${base}/${name}`, threadId: agent.threadId });
      await runVerified(page);
      expect(page.state).to.deep.equal({ theme: 'dark', document: DOCUMENT });
    });
  }

  for (const name of WRITERS) {
    it(`${name}: a tool that writes its predicted key itself wins: the prediction streams, then the tool's value replaces it`, async () => {
      const agent = new HttpAgent({ url: `${base}/${name}` });
      const { events } = await say(agent, 'call write_title {"title":"the dog"}');
      const values = events.filter((e) => e.type === 'STATE_DELTA').flatMap((e) => (e as BaseEvent & { delta: { path: string; value?: unknown }[] }).delta.map((op) => op.value));
      expect(values.at(-2)).to.equal('the dog');
      expect(values.at(-1)).to.equal('THE DOG');
      expect(agent.state).to.deep.equal({ title: 'THE DOG' });
    });
  }

  for (const name of WRITERS) {
    it(`${name}: a watched call waiting for approval: the prediction is taken back at the end of the run; approved, the state holds it; declined, it never does`, async () => {
      const agent = new HttpAgent({ url: `${base}/${name}` });
      const first = await say(agent, 'call publish {"text":"hello world"}');
      expect((first.events.at(-1) as { outcome?: { type: string } }).outcome?.type).to.equal('interrupt');
      const deltas = first.events.filter((e) => e.type === 'STATE_DELTA').map((e) => (e as BaseEvent & { delta: unknown[] }).delta);
      expect(deltas.at(-2)).to.deep.equal([{ op: 'replace', path: '/published', value: 'hello world' }]);
      expect(deltas.at(-1)).to.deep.equal([{ op: 'remove', path: '/published' }]);
      expect(agent.state).to.deep.equal({});
      const [interrupt] = agent.pendingInterrupts;
      const resumed = await runVerified(agent, { resume: [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } }] });
      expect(types(resumed.events)).to.include('TOOL_CALL_RESULT');
      expect(agent.state).to.deep.equal({ published: 'hello world' });

      const declined = new HttpAgent({ url: `${base}/${name}` });
      await say(declined, 'call publish {"text":"secret"}');
      await runVerified(declined, { resume: [{ interruptId: declined.pendingInterrupts[0]!.id, status: 'cancelled' }] });
      expect(declined.state).to.deep.equal({});
      expect(lastText(declined)).to.contain('the user rejected this call');
      // Stored as it ended: a new page reads the approved value, and nothing for the declined call.
      const approvedPage = new HttpAgent({ url: `${base}/${name}`, threadId: agent.threadId });
      await runVerified(approvedPage);
      expect(approvedPage.state).to.deep.equal({ published: 'hello world' });
      const declinedPage = new HttpAgent({ url: `${base}/${name}`, threadId: declined.threadId });
      await runVerified(declinedPage);
      expect(declinedPage.state).to.deep.equal({});
    });
  }

  it('an agent served without predictState sends no PredictState and no predicted deltas', async () => {
    const agent = new HttpAgent({ url: `${base}/plain` });
    const { events } = await say(agent, `call write_document ${JSON.stringify({ document: DOCUMENT })}`);
    expect(types(events)).to.not.include('CUSTOM');
    expect(types(events)).to.not.include('STATE_DELTA');
    expect(agent.state).to.deep.equal({});
  });

  it('STEP_STARTED / STEP_FINISHED: each model call and each tool round is a step, in order, closed before the run ends', async () => {
    const agent = new HttpAgent({ url: `${base}/plain` });
    const { events } = await say(agent, `call write_document ${JSON.stringify({ document: 'short' })}`);
    const outline = events
      .filter((e) => e.type.startsWith('STEP_') || ['TOOL_CALL_START', 'TOOL_CALL_END', 'TOOL_CALL_RESULT', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_END', 'RUN_FINISHED'].includes(e.type))
      .map((e) => `${e.type}${(e as { stepName?: string }).stepName ? ` ${(e as { stepName?: string }).stepName}` : ''}`);
    expect(outline).to.deep.equal([
      'STEP_STARTED model-call-1',
      'TOOL_CALL_START',
      'TOOL_CALL_END',
      'STEP_FINISHED model-call-1',
      'STEP_STARTED tool-round-1',
      'TOOL_CALL_RESULT',
      'STEP_FINISHED tool-round-1',
      'STEP_STARTED model-call-2',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_END',
      'STEP_FINISHED model-call-2',
      'RUN_FINISHED',
    ]);
  });

  it('a bad predictState rule is a ConfigurationError naming the rule and the field', () => {
    expect(() => new AgUiServer({ agent: agents.writer, predictState: [{ stateKey: 'document', tool: '', toolArgument: 'document' }] }))
      .to.throw(ConfigurationError, 'predictState[0] of agent "agent": "tool" must be a non-empty string; found "". Give { stateKey, tool, toolArgument }.');
  });
});
