import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';
import type { ChatMessage } from 'skein';
import { AssistantContentError, OpenAIAssistantAgent } from 'skein/openai';
import { emulatorClientPerTest } from '../support/emulator.js';
import { failure } from './emulator-client.js';

/** A 1x1 transparent PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';


const user = (...contents: ChatMessage['contents']): ChatMessage => ({ role: 'user', contents });

describe('Assistants: images and files in input reach the thread (real openai SDK, emulator)', () => {
  const suite = emulatorClientPerTest();
  let agent: OpenAIAssistantAgent;

  beforeEach(async () => {
    agent = await OpenAIAssistantAgent.create(suite.client, { model: 'gpt-test', name: 'viewer' }, { polling: { intervalMs: 1 } });
  });

  /** The thread's messages as the service stores them. */
  const serviceMessages = async (threadId: string) => (await suite.client.beta.threads.messages.list(threadId, { order: 'asc' })).data;
  const requestsAfter = (count: number) => suite.emulator.requests.slice(count);

  it('run: a web image goes as an image_url part and the model sees it', async () => {
    const thread = agent.getNewThread();
    const response = await agent.run(user({ kind: 'text', text: 'What is this?' }, { kind: 'uri', uri: 'https://example.com/cat.png', mediaType: 'image/png' }), { thread });
    expect(response.text).to.contain('[image: https://example.com/cat.png]');
    const [stored] = await serviceMessages(thread.serviceThreadId!);
    expect(stored!.content).to.deep.equal([
      { type: 'text', text: { value: 'What is this?', annotations: [] } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'auto' } },
    ]);
    // Read back, the image is still there.
    const read = await agent.getThreadMessages(thread);
    expect(read[0]!.contents).to.deep.include({ kind: 'uri', uri: 'https://example.com/cat.png' });
  });

  it('runStream: inline image data is uploaded (purpose vision) and sent as an image_file part', async () => {
    const thread = agent.getNewThread();
    const input = user({ kind: 'text', text: 'Describe it.' }, { kind: 'data', data: PNG, mediaType: 'image/png', additionalProperties: { filename: 'pixel.png' } });
    const updates = await lastValueFrom(agent.runStream(input, { thread }).pipe(toArray()));
    expect(updates.map((u) => u.text).join('')).to.contain('[image: pixel.png]');
    const files = (await suite.client.files.list()).data;
    expect(files.map((f) => [f.filename, f.purpose])).to.deep.equal([['pixel.png', 'vision']]);
    const bytes = Buffer.from(await (await suite.client.files.content(files[0]!.id)).arrayBuffer());
    expect(bytes.equals(Buffer.from(PNG, 'base64'))).to.equal(true);
    const [stored] = await serviceMessages(thread.serviceThreadId!);
    expect(stored!.content[1]).to.deep.equal({ type: 'image_file', image_file: { file_id: files[0]!.id, detail: 'auto' } });
    // The uploaded file belongs to the thread: deleting the thread deletes it.
    await agent.deleteThread(thread);
    expect((await suite.client.files.list()).data).to.deep.equal([]);
  });

  it('createThread: a data: URL image and a text file become an image_file part and a file_search attachment', async () => {
    const notes = Buffer.from('Refunds take five days.').toString('base64');
    const thread = await agent.createThread({
      messages: [
        user(
          { kind: 'text', text: 'Here is my receipt and the policy.' },
          { kind: 'uri', uri: `data:image/png;base64,${PNG}` },
          { kind: 'data', data: notes, mediaType: 'text/plain', additionalProperties: { filename: 'policy.txt' } },
        ),
      ],
    });
    const [stored] = await serviceMessages(thread.serviceThreadId!);
    const files = new Map((await suite.client.files.list()).data.map((f) => [f.filename, f]));
    expect(files.get('image.png')!.purpose).to.equal('vision');
    expect(files.get('policy.txt')!.purpose).to.equal('assistants');
    expect(stored!.content.map((p) => p.type)).to.deep.equal(['text', 'image_file']);
    expect(stored!.attachments).to.deep.equal([{ file_id: files.get('policy.txt')!.id, tools: [{ type: 'file_search' }] }]);
    const answer = await agent.run('What did I send?', { thread });
    expect(answer.text).to.contain('I have seen 1 earlier messages');
    const read = await agent.getThreadMessages(thread);
    expect(read[0]!.contents).to.deep.include({ kind: 'uri', uri: `openai-file:${files.get('policy.txt')!.id}`, mediaType: 'application/octet-stream', additionalProperties: { tools: ['file_search'] } });
  });

  it('addChatMessage: an uploaded file by id goes as an attachment for the tool its type needs; the model sees it', async () => {
    const uploaded = await OpenAIAssistantAgent.uploadFile(suite.client, { name: 'sales.csv', content: 'month,total\njan,3\n' });
    const thread = agent.getNewThread();
    await agent.addChatMessage(thread, user({ kind: 'text', text: 'Sum it.' }, { kind: 'uri', uri: `openai-file:${uploaded.id}`, mediaType: 'text/csv' }));
    const [stored] = await serviceMessages(thread.serviceThreadId!);
    expect(stored!.attachments).to.deep.equal([{ file_id: uploaded.id, tools: [{ type: 'code_interpreter' }] }]);
    const answer = await agent.invoke(thread);
    expect(answer.text).to.contain('[attachment: sales.csv for code_interpreter]');
  });

  describe('what a thread cannot carry is refused before any request', () => {
    const cases: [string, ChatMessage, string][] = [
      ['an audio clip', user({ kind: 'data', data: Buffer.from('RIFF').toString('base64'), mediaType: 'audio/wav' }), 'input[0].contents[0]'],
      ['a PDF behind a web URL', user({ kind: 'uri', uri: 'https://example.com/report.pdf', mediaType: 'application/pdf' }), 'input[0].contents[0]'],
      ['a bmp image', user({ kind: 'data', data: PNG, mediaType: 'image/bmp' }), 'input[0].contents[0]'],
      ['an image in an assistant message', { role: 'assistant', contents: [{ kind: 'uri', uri: 'https://example.com/a.png' }] }, 'input[0].contents[0]'],
      ['a tool result in input', user({ kind: 'function-result', callId: 'c1', result: 'x' }), 'input[0].contents[0]'],
      ['a file: URL', user({ kind: 'uri', uri: 'file:///etc/passwd' }), 'input[0].contents[0]'],
    ];
    for (const [label, message, path] of cases) {
      it(`${label}: AssistantContentError naming ${path}; nothing sent`, async () => {
        const before = suite.emulator.requests.length;
        const thread = agent.getNewThread();
        const error = await failure(agent.run([message], { thread }));
        expect(error).to.be.instanceOf(AssistantContentError);
        expect((error as AssistantContentError).path).to.equal(path);
        expect(requestsAfter(before)).to.deep.equal([]);
        const streamed = await failure(lastValueFrom(agent.runStream([message], { thread })));
        expect(streamed).to.be.instanceOf(AssistantContentError);
        expect(await failure(agent.addChatMessage(thread, message))).to.be.instanceOf(AssistantContentError);
        expect(await failure(agent.createThread({ messages: [message] }))).to.be.instanceOf(AssistantContentError);
        expect(requestsAfter(before)).to.deep.equal([]);
        expect(thread.serviceThreadId).to.equal(undefined);
      });
    }

    it('a bad message after a good one: nothing is uploaded or sent', async () => {
      const before = suite.emulator.requests.length;
      const good = user({ kind: 'data', data: PNG, mediaType: 'image/png' });
      const bad = user({ kind: 'data', data: 'AAAA', mediaType: 'video/mp4' });
      const error = await failure(agent.run([good, bad], { thread: agent.getNewThread() }));
      expect((error as AssistantContentError).path).to.equal('input[1].contents[0]');
      expect(error instanceof AssistantContentError && error.message).to.match(/video\/mp4.*Convert the file/);
      expect(requestsAfter(before)).to.deep.equal([]);
    });
  });

  it('the emulator refuses what the service refuses: a data URL in image_url, an image in an assistant message, an unknown file', async () => {
    const thread = await suite.client.beta.threads.create();
    const refusals = [
      { role: 'user' as const, content: [{ type: 'image_url' as const, image_url: { url: `data:image/png;base64,${PNG}` } }] },
      { role: 'assistant' as const, content: [{ type: 'image_url' as const, image_url: { url: 'https://example.com/a.png' } }] },
      { role: 'user' as const, content: [{ type: 'image_file' as const, image_file: { file_id: 'file-nope' } }] },
      { role: 'user' as const, content: 'x', attachments: [{ file_id: 'file-nope', tools: [{ type: 'file_search' as const }] }] },
    ];
    for (const body of refusals) {
      const error = (await failure(suite.client.beta.threads.messages.create(thread.id, body))) as { status: number };
      expect(error.status, JSON.stringify(body)).to.be.oneOf([400, 404]);
    }
    expect((await suite.client.beta.threads.messages.list(thread.id)).data).to.deep.equal([]);
  });
});
