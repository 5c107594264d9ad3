import { expect } from 'chai';
import { readSse, startFixture, type DevUIFixture } from './devui-fixture.js';

interface ChatCompletionBody {
  model: string;
  temperature?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  messages: { role: string; content: unknown }[];
}

describe('Dev UI per-run settings (HTTP API)', () => {
  let fx: DevUIFixture;
  beforeEach(async () => {
    fx = await startFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  const post = (body: Record<string, unknown>) => fx.fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const sentToModel = () => fx.emulator.requestsTo('/v1/chat/completions').map((r) => r.body as ChatCompletionBody);

  it('temperature, max tokens, model and extra instructions reach the model for that run only, and the turn and its trace show them', async () => {
    const settings = { temperature: 0.3, maxOutputTokens: 50, model: 'gpt-4o-mini', instructions: 'Answer in French.' };
    const events = await readSse(await post({ agent: 'assistant', text: 'My name is Lea', settings }));
    expect(events[0]).to.deep.include({ event: 'run' });
    expect(events[0]!.data.settings).to.deep.equal(settings);
    const [request] = sentToModel();
    expect(request).to.include({ model: 'gpt-4o-mini', temperature: 0.3 });
    expect(request!.max_completion_tokens ?? request!.max_tokens).to.equal(50);
    const system = JSON.stringify(request!.messages.find((m) => m.role === 'system' || m.role === 'developer')?.content);
    // The agent's own instructions stay; the extra ones follow them.
    expect(system).to.match(/You are a helpful assistant\..*Answer in French\./);

    const trace = events.find((e) => e.event === 'trace')!.data.trace as { settings: unknown; spans: { operation?: string; model?: string }[] };
    expect(trace.settings).to.deep.equal(settings);
    expect(trace.spans.find((s) => s.operation === 'chat')!.model).to.equal('gpt-4o-mini');

    // The next turn without settings runs with the agent's own again.
    const threadId = (events.find((e) => e.event === 'done')!.data.thread as { id: string }).id;
    await readSse(await post({ threadId, text: "What's my name?" }));
    const next = sentToModel().at(-1)!;
    expect(next.model).to.equal('gpt-4.1-mini');
    expect(next.temperature).to.equal(undefined);
    expect(JSON.stringify(next.messages)).to.not.contain('Answer in French.');
  });

  it('bad settings get a 400 that says what is expected, and nothing runs', async () => {
    const cases: [unknown, RegExp][] = [
      [{ temperature: 7 }, /settings\.temperature must be a number from 0 to 2; got 7/],
      [{ temperature: '0.5' }, /settings\.temperature must be a number/],
      [{ maxOutputTokens: 0 }, /settings\.maxOutputTokens must be a whole number of at least 1; got 0/],
      [{ maxOutputTokens: 2.5 }, /whole number/],
      [{ model: 42 }, /settings\.model must be a string/],
      [{ topK: 3 }, /settings\.topK is not a run setting/],
      ['hot', /"settings" must be a JSON object/],
    ];
    for (const [settings, message] of cases) {
      const response = await post({ agent: 'assistant', text: 'hello', settings });
      expect(response.status, JSON.stringify(settings)).to.equal(400);
      const body = (await response.json()) as { error: { message: string } };
      expect(body.error.message).to.match(message);
    }
    expect(sentToModel()).to.deep.equal([]);
    expect(await fx.devui.threads.list()).to.deep.equal([]);
  });
});
