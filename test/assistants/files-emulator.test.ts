import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { emulatorPerTest } from '../support/emulator.js';

const POLICY = 'Returns are accepted within 30 days. Refunds go to the original card within five business days.\nGift cards are never refunded.';

/** The rejection of `promise`; fails the test when it resolves. */
async function failure(promise: Promise<unknown>): Promise<{ status?: number; message: string; param?: string | null }> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error as { status?: number; message: string; param?: string | null },
  );
}

describe('Emulator: files and vector stores through the openai SDK', () => {
  let client: OpenAI;

  const running = emulatorPerTest();
  beforeEach(() => {
    client = new OpenAI({ apiKey: 'test', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 });
  });

  const upload = async (text: string | Buffer, name = 'policy.txt') => client.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'assistants' });

  it('uploads a file as multipart, retrieves it, lists it, serves its bytes and deletes it', async () => {
    const file = await client.files.create({ file: await toFile(Buffer.from(POLICY), 'policy.txt'), purpose: 'assistants' });
    expect(file).to.include({ object: 'file', filename: 'policy.txt', purpose: 'assistants', bytes: Buffer.byteLength(POLICY), status: 'processed' });
    expect(file.id).to.match(/^file-/);
    expect(running.emulator.requestsTo('/v1/files')[0]!.headers['content-type']).to.match(/^multipart\/form-data; boundary=/);
    expect((await client.files.retrieve(file.id)).filename).to.equal('policy.txt');
    const listed: string[] = [];
    for await (const f of client.files.list({ purpose: 'assistants' })) listed.push(f.id);
    expect(listed).to.deep.equal([file.id]);
    const content = await client.files.content(file.id);
    expect(await content.text()).to.equal(POLICY);
    expect(await client.files.delete(file.id)).to.include({ id: file.id, deleted: true });
    expect((await failure(client.files.retrieve(file.id))).status).to.equal(404);
  });

  it('keeps binary uploads byte for byte', async () => {
    const bytes = Buffer.from([0, 255, 13, 10, 45, 45, 0xfe, 0x80]);
    const file = await upload(bytes, 'blob.bin');
    const content = Buffer.from(await (await client.files.content(file.id)).arrayBuffer());
    expect(content.equals(bytes)).to.equal(true);
  });

  it('answers bad uploads with a 400 naming the parameter, and stores nothing', async () => {
    const empty = await failure(upload(''));
    expect(empty.status).to.equal(400);
    expect(empty.param).to.equal('file');
    expect(empty.message).to.contain('empty');
    const purpose = await failure(client.files.create({ file: await toFile(Buffer.from('x'), 'a.txt'), purpose: 'nonsense' as 'assistants' }));
    expect(purpose.status).to.equal(400);
    expect(purpose.param).to.equal('purpose');
    // Not multipart at all: still a clear 400, not a JSON parse error.
    const json = await fetch(`${running.emulator.openaiBaseURL}/files`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"purpose":"assistants"}' });
    expect(json.status).to.equal(400);
    expect(((await json.json()) as { error: { message: string } }).error.message).to.contain('multipart/form-data');
    const noFile = new FormData();
    noFile.append('purpose', 'assistants');
    const missing = await fetch(`${running.emulator.openaiBaseURL}/files`, { method: 'POST', body: noFile });
    expect(missing.status).to.equal(400);
    expect(((await missing.json()) as { error: { param: string } }).error.param).to.equal('file');
    expect((await client.files.list()).data).to.have.length(0);
  });

  it('still refuses a JSON body that is not JSON on every other route', async () => {
    const response = await fetch(`${running.emulator.openaiBaseURL}/vector_stores`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
    expect(response.status).to.equal(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).to.contain('not valid JSON');
  });

  it('creates a vector store whose files are in_progress until retrieved, then completed', async () => {
    const file = await upload(POLICY);
    const store = await client.vectorStores.create({ name: 'policies', file_ids: [file.id] });
    expect(store).to.include({ object: 'vector_store', name: 'policies', status: 'in_progress' });
    expect(store.file_counts).to.include({ in_progress: 1, total: 1 });
    const again = await client.vectorStores.retrieve(store.id);
    expect(again.status).to.equal('completed');
    expect(again.file_counts).to.include({ completed: 1, in_progress: 0, total: 1 });
    const files = await client.vectorStores.files.list(store.id);
    expect(files.data.map((f) => [f.id, f.status])).to.deep.equal([[file.id, 'completed']]);
    const listed: string[] = [];
    for await (const s of client.vectorStores.list()) listed.push(s.id);
    expect(listed).to.deep.equal([store.id]);
  });

  it('serves the SDK helpers: files.createAndPoll, files.uploadAndPoll and fileBatches.uploadAndPoll', async () => {
    const store = await client.vectorStores.create({ name: 'docs' });
    expect(store.status).to.equal('completed');
    const first = await upload('Alpha is the first letter.', 'alpha.md');
    const attached = await client.vectorStores.files.createAndPoll(store.id, { file_id: first.id }, { pollIntervalMs: 1 });
    expect(attached).to.include({ id: first.id, status: 'completed', vector_store_id: store.id });
    const uploaded = await client.vectorStores.files.uploadAndPoll(store.id, await toFile(Buffer.from('Beta comes second.'), 'beta.txt'), { pollIntervalMs: 1 });
    expect(uploaded.status).to.equal('completed');
    const batch = await client.vectorStores.fileBatches.uploadAndPoll(
      store.id,
      { files: [await toFile(Buffer.from('Gamma is third.'), 'gamma.txt'), await toFile(Buffer.from('Delta is fourth.'), 'delta.txt')] },
      { pollIntervalMs: 1 },
    );
    expect(batch.status).to.equal('completed');
    expect(batch.file_counts).to.include({ completed: 2, total: 2 });
    const batchFiles = await client.vectorStores.fileBatches.listFiles(batch.id, { vector_store_id: store.id });
    expect(batchFiles.data).to.have.length(2);
    expect((await client.vectorStores.retrieve(store.id)).file_counts.total).to.equal(4);
  });

  it('fails processing of a file type file search cannot read, with last_error', async () => {
    const file = await upload('a,b\n1,2', 'table.csv');
    const store = await client.vectorStores.create({ name: 'x' });
    const attached = await client.vectorStores.files.createAndPoll(store.id, { file_id: file.id }, { pollIntervalMs: 1 });
    expect(attached.status).to.equal('failed');
    expect(attached.last_error?.code).to.equal('unsupported_file');
    expect((await client.vectorStores.retrieve(store.id)).file_counts).to.include({ failed: 1, completed: 0 });
  });

  it('deletes vector store files, vector stores, and files out of every store', async () => {
    const a = await upload('Apples are red.', 'a.txt');
    const b = await upload('Bananas are yellow.', 'b.txt');
    const store = await client.vectorStores.create({ name: 'fruit', file_ids: [a.id, b.id] });
    expect(await client.vectorStores.files.delete(a.id, { vector_store_id: store.id })).to.include({ id: a.id, deleted: true });
    expect((await client.files.retrieve(a.id)).id).to.equal(a.id); // detaching keeps the file
    await client.files.delete(b.id);
    expect((await client.vectorStores.files.list(store.id)).data).to.have.length(0);
    expect(await client.vectorStores.delete(store.id)).to.include({ id: store.id, deleted: true, object: 'vector_store.deleted' });
    expect((await failure(client.vectorStores.retrieve(store.id))).status).to.equal(404);
    expect((await failure(client.vectorStores.files.create(store.id, { file_id: a.id }))).status).to.equal(404);
    const other = await client.vectorStores.create({ name: 'y' });
    expect((await failure(client.vectorStores.files.create(other.id, { file_id: 'file-missing' }))).status).to.equal(404);
  });

  describe('file search in runs', () => {
    const ask = async (assistantId: string, threadId: string, question: string) => {
      const run = await client.beta.threads.runs.createAndPoll(threadId, { assistant_id: assistantId, additional_messages: [{ role: 'user', content: question }] }, { pollIntervalMs: 1 });
      expect(run.status).to.equal('completed');
      const [message] = (await client.beta.threads.messages.list(threadId, { run_id: run.id })).data;
      const part = message!.content[0]!;
      if (part.type !== 'text') expect.fail('expected a text reply');
      return { run, text: part.text };
    };

    it('answers from an assistant vector store with a file_search step and a file_citation', async () => {
      const file = await upload(POLICY);
      const store = await client.vectorStores.create({ name: 'policies', file_ids: [file.id] });
      await client.vectorStores.retrieve(store.id);
      const assistant = await client.beta.assistants.create({ model: 'm', tools: [{ type: 'file_search' }], tool_resources: { file_search: { vector_store_ids: [store.id] } } });
      const thread = await client.beta.threads.create();
      const { run, text } = await ask(assistant.id, thread.id, 'How long do refunds take?');
      expect(text.value).to.equal('According to policy.txt: "Refunds go to the original card within five business days."【0:0†source】');
      expect(text.annotations).to.deep.equal([
        { type: 'file_citation', text: '【0:0†source】', start_index: text.value.indexOf('【'), end_index: text.value.length, file_citation: { file_id: file.id } },
      ]);
      expect(text.value.slice(text.annotations[0]!.start_index, text.annotations[0]!.end_index)).to.equal('【0:0†source】');
      const steps = (await client.beta.threads.runs.steps.list(run.id, { thread_id: thread.id, order: 'asc' })).data;
      expect(steps.map((s) => s.type)).to.deep.equal(['tool_calls', 'message_creation']);
      const details = steps[0]!.step_details;
      if (details.type !== 'tool_calls') expect.fail('expected tool calls');
      const call = details.tool_calls[0]!;
      if (call.type !== 'file_search') expect.fail('expected a file_search call');
      expect(call.file_search.results?.[0]).to.include({ file_id: file.id, file_name: 'policy.txt' });
      expect(call.file_search.results?.[0]?.content).to.equal(undefined);
      const included = await client.beta.threads.runs.steps.list(run.id, { thread_id: thread.id, include: ['step_details.tool_calls[*].file_search.results[*].content'] });
      const withText = included.data.find((s) => s.type === 'tool_calls')!.step_details;
      if (withText.type !== 'tool_calls' || withText.tool_calls[0]!.type !== 'file_search') expect.fail('expected file search');
      expect(withText.tool_calls[0].file_search.results?.[0]?.content?.[0]?.text).to.equal('Refunds go to the original card within five business days.');
    });

    it('answers from a thread vector store, and not from files still in progress', async () => {
      const file = await upload('The launch code is tangerine.', 'secrets.md');
      const store = await client.vectorStores.create({ name: 'secrets', file_ids: [file.id] });
      const assistant = await client.beta.assistants.create({ model: 'm', tools: [{ type: 'file_search' }] });
      const thread = await client.beta.threads.create({ tool_resources: { file_search: { vector_store_ids: [store.id] } } });
      const early = await ask(assistant.id, thread.id, 'What is the launch code?');
      expect(early.text.annotations).to.deep.equal([]);
      await client.vectorStores.retrieve(store.id);
      const { text } = await ask(assistant.id, thread.id, 'What is the launch code?');
      expect(text.value).to.contain('"The launch code is tangerine."');
      expect((text.annotations[0] as OpenAI.Beta.Threads.FileCitationAnnotation).file_citation.file_id).to.equal(file.id);
    });

    it('does not search without the file_search tool, or when no sentence shares a keyword', async () => {
      const file = await upload(POLICY);
      const store = await client.vectorStores.create({ name: 'p', file_ids: [file.id] });
      await client.vectorStores.retrieve(store.id);
      const plain = await client.beta.assistants.create({ model: 'm', tool_resources: { file_search: { vector_store_ids: [store.id] } } });
      const searching = await client.beta.assistants.create({ model: 'm', tools: [{ type: 'file_search' }], tool_resources: { file_search: { vector_store_ids: [store.id] } } });
      const thread = await client.beta.threads.create();
      expect((await ask(plain.id, thread.id, 'How long do refunds take?')).text.annotations).to.deep.equal([]);
      const unrelated = await ask(searching.id, thread.id, 'Hello there!');
      expect(unrelated.text.annotations).to.deep.equal([]);
      const steps = await client.beta.threads.runs.steps.list(unrelated.run.id, { thread_id: thread.id });
      expect(steps.data.map((s) => s.type)).to.deep.equal(['message_creation']);
    });

    it('refuses an assistant or thread naming a vector store that does not exist', async () => {
      const assistant = await failure(client.beta.assistants.create({ model: 'm', tool_resources: { file_search: { vector_store_ids: ['vs_nope'] } } }));
      expect(assistant.status).to.equal(404);
      const thread = await failure(client.beta.threads.create({ tool_resources: { file_search: { vector_store_ids: ['vs_nope'] } } }));
      expect(thread.status).to.equal(404);
    });

    it('streams the file_search step and the citation on the delta that completes it', async () => {
      const file = await upload(POLICY);
      const store = await client.vectorStores.create({ name: 'p', file_ids: [file.id] });
      await client.vectorStores.retrieve(store.id);
      const assistant = await client.beta.assistants.create({ model: 'm', tools: [{ type: 'file_search' }], tool_resources: { file_search: { vector_store_ids: [store.id] } } });
      const thread = await client.beta.threads.create();
      const stream = client.beta.threads.runs.stream(thread.id, { assistant_id: assistant.id, additional_messages: [{ role: 'user', content: 'Are gift cards refunded?' }] });
      const stepTypes: string[] = [];
      stream.on('runStepCreated', (step) => stepTypes.push(step.type));
      const final = await stream.finalMessages();
      const part = final[0]!.content[0]!;
      if (part.type !== 'text') expect.fail('expected text');
      expect(part.text.value).to.equal('According to policy.txt: "Gift cards are never refunded."【0:0†source】');
      expect(part.text.annotations).to.have.length(1);
      expect(stepTypes).to.deep.equal(['tool_calls', 'message_creation']);
    });
  });
});
