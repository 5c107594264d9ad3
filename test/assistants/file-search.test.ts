import { expect } from 'chai';
import OpenAI from 'openai';
import { lastValueFrom, toArray } from 'rxjs';
import { type AgentRunResponse, agentToken, createContainer, NotFoundError, ServiceError } from 'skein';
import {
  annotationsOf,
  fileCitationsOf,
  OpenAIAssistantAgent,
  type OpenAIFileCitationAnnotation,
  openaiPlugin,
  OpenAIServiceConfiguration,
  VectorStoreError,
} from 'skein/openai';
import { emulatorPerTest } from '../support/emulator.js';

const POLICY = 'Returns are accepted within 30 days. Refunds go to the original card within five business days.\nGift cards are never refunded.';
const REFUND_SENTENCE = 'Refunds go to the original card within five business days.';

/** The rejection of `promise`; fails the test when it resolves. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

describe('OpenAIAssistantAgent file search (real openai SDK against the emulator)', () => {
  let client: OpenAI;

  const running = emulatorPerTest();
  beforeEach(() => {
    client = new OpenAI({ apiKey: 'test', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 });
  });

  const policyStore = async () => {
    const file = await OpenAIAssistantAgent.uploadFile(client, { name: 'policy.txt', content: POLICY });
    const store = await OpenAIAssistantAgent.createVectorStore(client, { name: 'policies', fileIds: [file.id], polling: { intervalMs: 1 } });
    return { file, store };
  };

  /** The one assistant text content carrying annotations, and the message it is in. */
  const citedText = (response: AgentRunResponse) => {
    const message = response.messages.find((m) => m.contents.some((c) => annotationsOf(c).length > 0));
    expect(message, 'a message with citations').to.not.equal(undefined);
    const text = message!.contents.map((c) => (c.kind === 'text' ? c.text : '')).join('');
    return { message: message!, text };
  };

  it('uploads a file and creates a vector store that is ready when the call returns', async () => {
    const { file, store } = await policyStore();
    expect(file).to.include({ name: 'policy.txt', bytes: Buffer.byteLength(POLICY), purpose: 'assistants' });
    expect(file.id).to.match(/^file-/);
    expect(store).to.include({ name: 'policies', status: 'completed' });
    expect(store.fileCounts).to.deep.equal({ inProgress: 0, completed: 1, failed: 0, cancelled: 0, total: 1 });
    // The store was still processing when created: the helper polled it.
    expect(running.emulator.requests.filter((r) => r.method === 'GET' && r.path === `/v1/vector_stores/${store.id}`)).to.have.length.greaterThan(0);
    expect(await (await client.files.content(file.id)).text()).to.equal(POLICY);
  });

  it('answers from a vector store attached to the assistant, quoting the file with a citation', async () => {
    const { file, store } = await policyStore();
    const agent = await OpenAIAssistantAgent.create(client, { model: 'gpt-test', name: 'support', enableFileSearch: true, vectorStoreIds: [store.id] }, { polling: { intervalMs: 1 } });
    const created = running.emulator.requests.find((r) => r.method === 'POST' && r.path === '/v1/assistants')!.body as Record<string, unknown>;
    expect(created.tools).to.deep.equal([{ type: 'file_search' }]);
    expect(created.tool_resources).to.deep.equal({ file_search: { vector_store_ids: [store.id] } });

    const response = await agent.run('How long do refunds take?', { thread: agent.getNewThread() });
    expect(response.text).to.equal(`According to policy.txt: "${REFUND_SENTENCE}"【0:0†source】`);
    const citations = fileCitationsOf(response);
    expect(citations).to.have.length(1);
    expect(citations[0]).to.include({ fileId: file.id, marker: '【0:0†source】' });
    const { message, text } = citedText(response);
    expect(text.slice(citations[0]!.startIndex, citations[0]!.endIndex)).to.equal('【0:0†source】');
    expect(citations[0]!.messageId).to.equal(message.messageId);
    // The annotations are plain JSON: they survive a JSON round trip unchanged.
    const content = message.contents.find((c) => annotationsOf(c).length > 0)!;
    expect(JSON.parse(JSON.stringify(content.additionalProperties))).to.deep.equal(content.additionalProperties);
    const [annotation] = annotationsOf(content) as OpenAIFileCitationAnnotation[];
    expect(annotation).to.deep.equal({ type: 'file_citation', text: '【0:0†source】', start_index: citations[0]!.startIndex, end_index: citations[0]!.endIndex, file_citation: { file_id: file.id } });

    // A retrieved assistant reports its stores and file search.
    const again = await OpenAIAssistantAgent.retrieve(client, agent.id!);
    expect(again.definition).to.deep.include({ enableFileSearch: true, vectorStoreIds: [store.id] });
  });

  it('answers from a vector store attached to one thread only', async () => {
    const { file, store } = await policyStore();
    const agent = await OpenAIAssistantAgent.create(client, { model: 'gpt-test', name: 'support', enableFileSearch: true }, { polling: { intervalMs: 1 } });
    const withStore = await agent.createThread({ vectorStoreIds: [store.id] });
    const threadBody = running.emulator.requests.find((r) => r.method === 'POST' && r.path === '/v1/threads')!.body as Record<string, unknown>;
    expect(threadBody.tool_resources).to.deep.equal({ file_search: { vector_store_ids: [store.id] } });
    const cited = await agent.run('Are gift cards refunded?', { thread: withStore });
    expect(cited.text).to.equal('According to policy.txt: "Gift cards are never refunded."【0:0†source】');
    expect(fileCitationsOf(cited).map((c) => c.fileId)).to.deep.equal([file.id]);

    // The same assistant on another thread has no files to search.
    const plain = await agent.run('Are gift cards refunded?', { thread: agent.getNewThread() });
    expect(fileCitationsOf(plain)).to.deep.equal([]);
    expect(plain.text).to.not.contain('policy.txt');

    // The thread's messages read back later carry the same citation.
    const history = await agent.getThreadMessages(withStore);
    expect(fileCitationsOf(history).map((c) => c.fileId)).to.deep.equal([file.id]);
  });

  it('turns file search on for one run with invocationOptions.enableFileSearch', async () => {
    const { file, store } = await policyStore();
    const agent = await OpenAIAssistantAgent.create(client, { model: 'gpt-test', name: 'support' }, { polling: { intervalMs: 1 } });
    const thread = await agent.createThread({ vectorStoreIds: [store.id] });
    expect(fileCitationsOf(await agent.run('How long do refunds take?', { thread }))).to.deep.equal([]);
    const response = await agent.run('How long do refunds take?', { thread, invocationOptions: { enableFileSearch: true } });
    expect(fileCitationsOf(response).map((c) => c.fileId)).to.deep.equal([file.id]);
  });

  it('streams the cited answer with the annotation on the update that completes the marker', async () => {
    const { file, store } = await policyStore();
    const agent = await OpenAIAssistantAgent.create(client, { model: 'gpt-test', name: 'support', enableFileSearch: true, vectorStoreIds: [store.id] }, { polling: { intervalMs: 1 } });
    const updates = await lastValueFrom(agent.runStream('How long do refunds take?', { thread: agent.getNewThread() }).pipe(toArray()));
    const text = updates.map((u) => u.text).join('');
    expect(text).to.equal(`According to policy.txt: "${REFUND_SENTENCE}"【0:0†source】`);
    const annotated = updates.flatMap((u) => u.contents.flatMap((c) => annotationsOf(c)));
    expect(annotated).to.have.length(1);
    expect(annotated[0]).to.deep.include({ type: 'file_citation', text: '【0:0†source】', end_index: text.length });
    expect(text.slice(annotated[0]!.start_index, annotated[0]!.end_index)).to.equal('【0:0†source】');
    expect((annotated[0] as OpenAIFileCitationAnnotation).file_citation.file_id).to.equal(file.id);
  });

  it('takes an OpenAIServiceConfiguration and works from a config file agent', async () => {
    const config = OpenAIServiceConfiguration.forOpenAI({ apiKey: 'test', baseURL: running.emulator.openaiBaseURL });
    const file = await OpenAIAssistantAgent.uploadFile(config, { name: 'faq.md', content: new TextEncoder().encode('Support is open from nine to five on weekdays.') });
    const store = await OpenAIAssistantAgent.createVectorStore(config, { name: 'faq', fileIds: [file.id], polling: { intervalMs: 1 } });
    const container = createContainer({
      plugins: [openaiPlugin({ apiKey: 'test', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 })],
      agents: { faq: { client: 'openai-assistants', model: 'gpt-test', enableFileSearch: true, vectorStoreIds: [store.id], polling: { intervalMs: 1 } } },
    });
    const agent = container.get(agentToken('faq'));
    const response = await agent.run('When is support open?', { thread: agent.getNewThread() });
    expect(response.text).to.contain('"Support is open from nine to five on weekdays."');
    expect(fileCitationsOf(response).map((c) => c.fileId)).to.deep.equal([file.id]);
  });

  it('deletes vector stores and files; deleting again is a NotFoundError', async () => {
    const { file, store } = await policyStore();
    await OpenAIAssistantAgent.deleteVectorStore(client, store.id);
    expect(await failure(client.vectorStores.retrieve(store.id))).to.have.property('status', 404);
    expect(await failure(OpenAIAssistantAgent.deleteVectorStore(client, store.id))).to.be.instanceOf(NotFoundError);
    expect((await client.files.retrieve(file.id)).id).to.equal(file.id); // the file outlives its store
    await OpenAIAssistantAgent.deleteFile(client, file.id);
    expect((await client.files.list()).data).to.deep.equal([]);
    expect(await failure(OpenAIAssistantAgent.deleteFile(client, file.id))).to.be.instanceOf(NotFoundError);
  });

  it('a deleted file is no longer found by file search', async () => {
    const { file, store } = await policyStore();
    const agent = await OpenAIAssistantAgent.create(client, { model: 'gpt-test', name: 'support', enableFileSearch: true, vectorStoreIds: [store.id] }, { polling: { intervalMs: 1 } });
    await OpenAIAssistantAgent.deleteFile(client, file.id);
    const response = await agent.run('How long do refunds take?', { thread: agent.getNewThread() });
    expect(fileCitationsOf(response)).to.deep.equal([]);
  });

  describe('bad uploads and stores', () => {
    it('an empty file is refused by the service: a ServiceError with status 400, nothing stored', async () => {
      const error = await failure(OpenAIAssistantAgent.uploadFile(client, { name: 'empty.txt', content: '' }));
      expect(error).to.be.instanceOf(ServiceError);
      expect(error).to.have.property('status', 400);
      expect((error as Error).message).to.contain("File 'empty.txt' is empty");
      expect((await client.files.list()).data).to.deep.equal([]);
    });

    it('an unknown purpose is a ServiceError with status 400', async () => {
      const error = await failure(OpenAIAssistantAgent.uploadFile(client, { name: 'a.txt', content: 'x', purpose: 'bogus' as 'assistants' }));
      expect(error).to.be.instanceOf(ServiceError);
      expect(error).to.have.property('status', 400);
      expect((error as Error).message).to.contain('purpose');
    });

    it('a missing name or content is a TypeError before any request', async () => {
      const before = running.emulator.requests.length;
      expect(await failure(OpenAIAssistantAgent.uploadFile(client, { name: ' ', content: 'x' }))).to.be.instanceOf(TypeError);
      expect(await failure(OpenAIAssistantAgent.uploadFile(client, { name: 'a.txt' } as never))).to.be.instanceOf(TypeError);
      expect(running.emulator.requests.length).to.equal(before);
    });

    it('a vector store over an unknown file is a NotFoundError', async () => {
      expect(await failure(OpenAIAssistantAgent.createVectorStore(client, { name: 'x', fileIds: ['file-nope'], polling: { intervalMs: 1 } }))).to.be.instanceOf(NotFoundError);
    });

    it('a file the service cannot index fails createVectorStore with a VectorStoreError naming it; the store is kept', async () => {
      const good = await OpenAIAssistantAgent.uploadFile(client, { name: 'policy.txt', content: POLICY });
      const bad = await OpenAIAssistantAgent.uploadFile(client, { name: 'table.csv', content: 'a,b\n1,2' });
      const error = await failure(OpenAIAssistantAgent.createVectorStore(client, { name: 'mixed', fileIds: [good.id, bad.id], polling: { intervalMs: 1 } }));
      expect(error).to.be.instanceOf(VectorStoreError);
      const e = error as VectorStoreError;
      expect(e.failedFiles).to.deep.equal([{ fileId: bad.id, code: 'unsupported_file', message: "File type '.csv' of 'table.csv' is not supported for file search." }]);
      expect(e.message).to.contain(bad.id);
      expect((await client.vectorStores.retrieve(e.vectorStoreId)).file_counts).to.include({ completed: 1, failed: 1 });
    });

    it('attaching a vector store that does not exist is a NotFoundError on create and on createThread', async () => {
      expect(await failure(OpenAIAssistantAgent.create(client, { model: 'gpt-test', enableFileSearch: true, vectorStoreIds: ['vs_nope'] }))).to.be.instanceOf(NotFoundError);
      const agent = await OpenAIAssistantAgent.create(client, { model: 'gpt-test', name: 'support', enableFileSearch: true });
      expect(await failure(agent.createThread({ vectorStoreIds: ['vs_nope'] }))).to.be.instanceOf(NotFoundError);
    });
  });
});
