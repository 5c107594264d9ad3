import { expect } from 'chai';
import { tableBookings } from '../../samples/devui/devui-tools-plugin.js';
import { startFixture, type DevUIFixture } from './devui-fixture.js';

interface ToolInfo {
  name: string;
  description?: string;
  parameters: { type: string; properties: Record<string, { type: string }>; required?: string[] };
  requiresApproval: boolean;
}

describe('Dev UI: running a tool by hand (HTTP API)', () => {
  let fx: DevUIFixture;
  beforeEach(async () => {
    fx = await startFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  const run = (agent: string, tool: string, body: unknown) =>
    fx.fetch(`/api/agents/${agent}/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('lists an agent\'s local tools with the JSON Schema of their arguments', async () => {
    const response = await fx.fetch('/api/agents/assistant/tools');
    const { tools } = (await response.json()) as { tools: ToolInfo[] };
    expect(tools.map((t) => [t.name, t.requiresApproval])).to.deep.equal([
      ['get_weather', false],
      ['book_table', true],
    ]);
    const booking = tools[1]!;
    expect(booking.parameters.type).to.equal('object');
    expect(Object.keys(booking.parameters.properties)).to.deep.equal(['restaurant', 'time', 'people']);
    expect(booking.parameters.properties.people!.type).to.equal('integer');
  });

  it('runs a tool outside any conversation: the result comes back, no model is called, no thread is made', async () => {
    const response = await run('assistant', 'get_weather', { arguments: { city: 'Oslo' } });
    expect(response.status).to.equal(200);
    const reply = (await response.json()) as { result: { city: string; forecast: string }; durationMs: number; error?: string };
    expect(reply.result).to.include({ city: 'Oslo', forecast: 'sunny' });
    expect(reply.durationMs).to.be.a('number');
    expect(reply.error).to.equal(undefined);
    expect(fx.emulator.requests).to.deep.equal([]);
    expect(await fx.devui.threads.list()).to.deep.equal([]);
  });

  it('a tool that needs approval runs by hand only with "approved": true, exactly once; without it a 409 says how, and nothing runs', async () => {
    const restaurant = `Hand ${Math.random().toString(36).slice(2, 8)}`;
    const args = { restaurant, time: '12:00', people: 3 };
    const refused = await run('assistant', 'book_table', { arguments: args });
    expect(refused.status).to.equal(409);
    const error = ((await refused.json()) as { error: { name: string; message: string } }).error;
    expect(error.name).to.equal('ToolApprovalRequiredError');
    expect(error.message).to.equal('Tool "book_table" needs the user\'s approval; it was not run. Send "approved": true (the "I approve" box) to run it by hand.');
    const rejected = (await (await run('assistant', 'book_table', { arguments: args, approved: false })).json()) as { error?: string };
    expect(rejected.error).to.equal('not run: the user rejected this call.');
    const badAnswer = await run('assistant', 'book_table', { arguments: args, approved: 'yes' });
    expect(badAnswer.status).to.equal(400);
    expect(tableBookings().filter((b) => b.restaurant === restaurant)).to.deep.equal([]);

    const reply = (await (await run('assistant', 'book_table', { arguments: args, approved: true })).json()) as { result: { bookingId: string } };
    expect(tableBookings().filter((b) => b.restaurant === restaurant)).to.have.length(1);
    expect(reply.result.bookingId).to.be.a('string');
  });

  it('arguments the schema refuses come back as the tool\'s error; unknown tools and bad bodies are typed 4xx errors', async () => {
    const restaurant = `Bad ${Math.random().toString(36).slice(2, 8)}`;
    const bad = (await (await run('assistant', 'book_table', { arguments: { restaurant, time: '12:00', people: 'two' }, approved: true })).json()) as { error?: string };
    expect(bad.error).to.be.a('string').and.match(/people/);
    expect(tableBookings().filter((b) => b.restaurant === restaurant)).to.deep.equal([]);

    const unknown = await run('assistant', 'launch_rocket', { arguments: {} });
    expect(unknown.status).to.equal(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).to.equal('Agent "assistant" has no tool "launch_rocket"; its tools: get_weather, book_table.');
    const notObject = await run('assistant', 'get_weather', { arguments: ['Oslo'] });
    expect(notObject.status).to.equal(400);
    expect(((await notObject.json()) as { error: { message: string } }).error.message).to.equal('"arguments" must be a JSON object.');
    const noAgent = await run('nobody', 'get_weather', { arguments: {} });
    expect(noAgent.status).to.equal(400);
  });
});
