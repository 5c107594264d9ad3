import { expect } from 'chai';
import type { TurnTrace as Trace } from '../../src/devui/turn-traces.js';
import { readSse, startFixture, type DevUIFixture, type SseEvent } from './devui-fixture.js';

describe('Dev UI turn traces (HTTP API)', () => {
  let fx: DevUIFixture;
  afterEach(async () => {
    await fx?.close();
  });

  const chat = async (body: Record<string, unknown>): Promise<SseEvent[]> => {
    const response = await fx.fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return readSse(response);
  };
  const traces = async (threadId: string) => {
    const response = await fx.fetch(`/api/threads/${threadId}/traces`);
    return { status: response.status, body: (await response.json()) as { enabled: boolean; captureContent: boolean; traces: Trace[] } };
  };
  const threadOf = (events: SseEvent[]) => (events.find((e) => e.event === 'done')!.data.thread as { id: string }).id;

  it('a turn with a tool call: the run span holds the model call, the tool span and the second model call, in order, with durations, model, tokens and finish reasons', async () => {
    fx = await startFixture();
    const events = await chat({ agent: 'assistant', text: 'call get_weather {"city":"Paris"}' });
    const streamed = events.find((e) => e.event === 'trace')!.data.trace as Trace;
    // Sent before the turn's done event, so the page shows it with the turn.
    expect(events.map((e) => e.event).slice(-3)).to.deep.equal(['trace', 'usage', 'done']);
    const { status, body } = await traces(threadOf(events));
    expect(status).to.equal(200);
    expect(body).to.include({ enabled: true, captureContent: false });
    expect(body.traces).to.have.length(1);
    const [trace] = body.traces;
    expect(trace).to.deep.equal(streamed);
    expect(trace!.spans.map((s) => s.name)).to.deep.equal(['invoke_agent assistant', 'chat gpt-4.1-mini', 'execute_tool get_weather', 'chat gpt-4.1-mini']);
    const [run, firstCall, tool, secondCall] = trace!.spans;
    for (const child of [firstCall, tool, secondCall]) expect(child!.parentSpanId).to.equal(run!.spanId);
    // Listed in the order they ran; their start times never go back (the clock may give two the same instant,
    // and a streamed span closes a moment after the next step began, so ends may overlap slightly).
    expect(firstCall!.startMs).to.be.at.most(tool!.startMs);
    expect(tool!.startMs).to.be.at.most(secondCall!.startMs);
    for (const span of trace!.spans) expect(span.durationMs).to.be.a('number').and.at.least(0);
    expect(trace!.durationMs).to.be.at.least(run!.durationMs);
    expect(firstCall).to.include({ operation: 'chat', model: 'gpt-4.1-mini', status: 'ok' });
    expect(firstCall!.finishReasons).to.deep.equal(['tool_calls']);
    expect(secondCall!.finishReasons).to.deep.equal(['stop']);
    expect(firstCall!.inputTokens).to.be.greaterThan(0);
    expect(firstCall!.outputTokens).to.be.greaterThan(0);
    expect(tool).to.include({ operation: 'execute_tool', toolName: 'get_weather', toolArguments: '{"city":"Paris"}' });
    expect(JSON.parse(tool!.toolResult!)).to.include({ city: 'Paris', forecast: 'sunny' });
    // Without content capture no message body is kept.
    expect(trace!.spans.some((s) => s.request !== undefined || s.response !== undefined)).to.equal(false);

    // A second turn adds a second trace to the same thread.
    await chat({ agent: 'assistant', threadId: threadOf(events), text: 'My name is Ada' });
    expect((await traces(threadOf(events))).body.traces.map((t) => t.spans.map((s) => s.operation))).to.deep.equal([
      ['invoke_agent', 'chat', 'execute_tool', 'chat'],
      ['invoke_agent', 'chat'],
    ]);
  });

  it('a failed model call is in the trace as an error span with the service\'s message', async () => {
    fx = await startFixture();
    const first = await chat({ agent: 'assistant', text: 'My name is Bo' });
    fx.emulator.injectFault({ kind: 'status', status: 500, times: 3, retryAfterSeconds: 0, message: 'The emulated service broke.' });
    const failed = await chat({ agent: 'assistant', threadId: threadOf(first), text: 'Still there?' });
    expect(failed.at(-1)!.event).to.equal('error');
    const [, trace] = (await traces(threadOf(first))).body.traces;
    expect(trace!.spans.map((s) => [s.operation, s.status])).to.deep.equal([
      ['invoke_agent', 'error'],
      ['chat', 'error'],
    ]);
    expect(trace!.spans[1]!.error).to.contain('The emulated service broke.');
  });

  it('with content capture on, each model call keeps the messages sent and received', async () => {
    fx = await startFixture({ captureContent: true });
    const events = await chat({ agent: 'assistant', text: 'My name is Cy' });
    const { body } = await traces(threadOf(events));
    expect(body.captureContent).to.equal(true);
    const call = body.traces[0]!.spans.find((s) => s.operation === 'chat')!;
    expect(call.request).to.contain('My name is Cy');
    expect(call.response).to.contain('Nice to meet you, Cy!');
  });

  it('with content capture on, the Request view holds everything the model was sent, the instructions first as the system message', async () => {
    fx = await startFixture({ captureContent: true });
    const first = await chat({ agent: 'assistant', text: 'My name is Cy' });
    // Extra instructions from the run settings are sent too (after the agent's own).
    await chat({ agent: 'assistant', threadId: threadOf(first), text: 'What is my name?', settings: { instructions: 'Answer briefly.' } });
    const sent = fx.emulator.requestsTo('/v1/chat/completions').map((r) => (r.body as { messages: { role: string; content: string }[] }).messages);
    expect(sent).to.have.length(2);
    expect(sent[1]![0]!.role).to.equal('system');
    const { body } = await traces(threadOf(first));
    const shown = body.traces.map((t) => {
      const call = t.spans.find((s) => s.operation === 'chat')!;
      const messages = JSON.parse(call.request!) as { role: string; parts: { type: string; content: string }[] }[];
      return messages.map((m) => ({ role: m.role, content: m.parts.map((p) => p.content).join('') }));
    });
    // Role and text of every message, as the model received them, in order.
    expect(shown).to.deep.equal(sent.map((messages) => messages.map((m) => ({ role: m.role, content: m.content }))));
    expect(shown[1]![0]!.content).to.match(/^You are a helpful assistant\..*\n\nAnswer briefly\.$/s);
  });

  it('traces stay in memory for the session: a deleted thread\'s are gone, an unknown thread is a 404, a restart starts empty', async () => {
    fx = await startFixture();
    const events = await chat({ agent: 'assistant', text: 'hello' });
    const id = threadOf(events);
    expect((await traces(id)).body.traces).to.have.length(1);
    await fx.restart();
    expect((await traces(id)).body.traces).to.deep.equal([]);
    await chat({ agent: 'assistant', threadId: id, text: 'again' });
    await fx.fetch(`/api/threads/${id}`, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
    const gone = await traces(id);
    expect(gone.status).to.equal(404);
    expect(gone.body).to.have.nested.property('error.message').that.contains(`No thread "${id}"`);
  });
});
