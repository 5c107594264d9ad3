import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { createEmulatorAgentsClient } from 'skein/azure-ai-agents';
import { emulatorPerTest, rejection } from './sdk-fixture.js';

/**
 * Every list route of the emulator pages as the API reference says of list endpoints: `order`
 * (default desc), `limit` 1..100 (default 20), `after` / `before` cursors ("before=obj_foo in
 * order to fetch the previous page of the list"), `first_id`, `last_id`, `has_more`. Read through
 * the real SDKs: `before` gives the page just before the cursor, not the start of the list.
 */
describe('Emulator: list paging with before, through the real SDKs', () => {
  const fixture = emulatorPerTest();
  let client: OpenAI;
  beforeEach(() => ({ client } = fixture));

  const ids = (page: { data: { id: string }[] }) => page.data.map((item) => item.id);
  /** The page before `cursor` in `ordered` (the list in the order asked), `limit` items nearest to it. */
  const pageBefore = (ordered: string[], cursor: string, limit: number) => ordered.slice(Math.max(0, ordered.indexOf(cursor) - limit), ordered.indexOf(cursor));

  it('Assistants: assistants, thread messages, runs and run steps', async () => {
    const assistants: string[] = [];
    for (let i = 0; i < 6; i++) assistants.push((await client.beta.assistants.create({ model: 'm', name: `a${i}` })).id);
    const newestFirst = [...assistants].reverse();
    const page = await client.beta.assistants.list({ limit: 2, before: newestFirst[4]! });
    expect(ids(page)).to.deep.equal(pageBefore(newestFirst, newestFirst[4]!, 2)).and.deep.equal([newestFirst[2], newestFirst[3]]);
    expect(page.has_more).to.equal(true);
    const first = await client.beta.assistants.list({ limit: 3, before: newestFirst[2]! });
    expect(ids(first)).to.deep.equal(newestFirst.slice(0, 2));
    expect(first.has_more).to.equal(false);

    const thread = await client.beta.threads.create({ messages: Array.from({ length: 7 }, (_, i) => ({ role: 'user' as const, content: `m${i}` })) });
    const oldestFirst = ids(await client.beta.threads.messages.list(thread.id, { order: 'asc' }));
    const asc = await client.beta.threads.messages.list(thread.id, { order: 'asc', limit: 3, before: oldestFirst[5]! });
    expect(asc.data.map((m) => (m.content[0] as { text: { value: string } }).text.value)).to.deep.equal(['m2', 'm3', 'm4']);
    const desc = await client.beta.threads.messages.list(thread.id, { limit: 2, before: oldestFirst[1]! });
    expect(ids(desc)).to.deep.equal([oldestFirst[3], oldestFirst[2]]);
    expect(desc.has_more).to.equal(true);

    const assistant = assistants[0]!;
    const runs: string[] = [];
    for (let i = 0; i < 4; i++) runs.push((await client.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant })).id);
    const runsBefore = await client.beta.threads.runs.list(thread.id, { order: 'asc', limit: 2, before: runs[3]! });
    expect(ids(runsBefore)).to.deep.equal([runs[1], runs[2]]);

    // A run that called a tool has two steps: the tool calls, then the message.
    const tools = [{ type: 'function' as const, function: { name: 'ping', parameters: { type: 'object', properties: {} } } }];
    const waiting = await client.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant, tools, additional_messages: [{ role: 'user', content: 'call ping {}' }] });
    const call = waiting.required_action!.submit_tool_outputs.tool_calls[0]!;
    await client.beta.threads.runs.submitToolOutputsAndPoll(waiting.id, { thread_id: thread.id, tool_outputs: [{ tool_call_id: call.id, output: 'pong' }] });
    const steps = ids(await client.beta.threads.runs.steps.list(waiting.id, { thread_id: thread.id, order: 'asc' }));
    expect(steps).to.have.length(2);
    const stepsBefore = await client.beta.threads.runs.steps.list(waiting.id, { thread_id: thread.id, limit: 1, before: steps[0]! });
    expect(ids(stepsBefore)).to.deep.equal([steps[1]]);
  });

  it('Files and vector stores: stores and their files take before; GET /files takes after only and up to 10000 a page', async () => {
    const files: string[] = [];
    for (let i = 0; i < 5; i++) files.push((await client.files.create({ file: await toFile(Buffer.from(`doc ${i}`), `d${i}.txt`), purpose: 'assistants' })).id);
    const stores: string[] = [];
    for (let i = 0; i < 4; i++) stores.push((await client.vectorStores.create({ name: `s${i}` })).id);
    const storesBefore = await client.vectorStores.list({ order: 'asc', limit: 2, before: stores[3]! });
    expect(ids(storesBefore)).to.deep.equal([stores[1], stores[2]]);
    expect(storesBefore.has_more).to.equal(true);

    for (const id of files) await client.vectorStores.files.createAndPoll(stores[0]!, { file_id: id });
    const attached = ids(await client.vectorStores.files.list(stores[0]!, { order: 'asc' }));
    expect(attached).to.deep.equal(files);
    const storeFilesBefore = await client.vectorStores.files.list(stores[0]!, { order: 'asc', limit: 2, before: files[4]! });
    expect(ids(storeFilesBefore)).to.deep.equal([files[2], files[3]]);

    const byDefault = await client.files.list();
    expect(ids(byDefault)).to.deep.equal([...files].reverse());
    expect(ids(await client.files.list({ order: 'asc', limit: 2, after: files[1]! }))).to.deep.equal([files[2], files[3]]);
    const big = await fetch(`${fixture.emulator.openaiBaseURL}/files?limit=10000`, { headers: { authorization: 'Bearer test' } });
    expect(big.status).to.equal(200);
    const tooBig = await rejection(client.files.list({ limit: 10_001 }));
    expect(tooBig).to.be.instanceOf(OpenAI.BadRequestError);
    expect((tooBig as Error).message).to.contain("Invalid 'limit': expected an integer from 1 to 10000");
  });

  it('a bad page query is a 400 naming the parameter (an unknown cursor, a limit over 100)', async () => {
    const thread = await client.beta.threads.create({ messages: [{ role: 'user', content: 'hi' }] });
    const unknown = await rejection(client.beta.threads.messages.list(thread.id, { before: 'msg_nope' }));
    expect(unknown).to.be.instanceOf(OpenAI.BadRequestError);
    expect((unknown as Error).message).to.contain("No item with id 'msg_nope' in this list to page before.");
    const tooMany = await rejection(client.beta.assistants.list({ limit: 101 }));
    expect((tooMany as Error).message).to.contain("Invalid 'limit': expected an integer from 1 to 100, got \"101\".");
  });

  it('Foundry Agents: agents, thread messages and runs (real @azure/ai-agents client)', async () => {
    const agents = createEmulatorAgentsClient(fixture.emulator.url, { token: 'x', clientOptions: { retryOptions: { maxRetries: 0 } } });
    const firstPage = async <T>(pages: { byPage(): AsyncIterableIterator<T[]> }) => (await pages.byPage().next()).value as T[];
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await agents.createAgent('gpt-4o', { name: `f${i}` })).id);
    const agentsBefore = await firstPage(agents.listAgents({ order: 'asc', limit: 2, before: made[4]! }));
    expect(agentsBefore.map((a) => a.id)).to.deep.equal([made[2], made[3]]);

    const thread = await agents.threads.create({ messages: Array.from({ length: 6 }, (_, i) => ({ role: 'user' as const, content: `m${i}` })) });
    const oldestFirst = (await firstPage(agents.messages.list(thread.id, { order: 'asc', limit: 100 }))).map((m) => m.id);
    const messagesBefore = await firstPage(agents.messages.list(thread.id, { limit: 2, before: oldestFirst[1]! }));
    expect(messagesBefore.map((m) => m.id)).to.deep.equal([oldestFirst[3], oldestFirst[2]]);

    const runs: string[] = [];
    for (let i = 0; i < 3; i++) runs.push((await agents.runs.createAndPoll(thread.id, made[0]!, { pollingOptions: { intervalInMs: 1 } })).id);
    const runsBefore = await firstPage(agents.runs.list(thread.id, { order: 'asc', limit: 1, before: runs[2]! }));
    expect(runsBefore.map((r) => r.id)).to.deep.equal([runs[1]]);
  });
});
