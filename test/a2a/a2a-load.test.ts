import 'reflect-metadata';
import type { Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { expect } from 'chai';
import { ChatAgent } from 'skein';
import { A2AServer, partsText } from 'skein/a2a';
import { OpenAIChatClient } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { userMessage } from './remote-fixtures.js';

const CONTEXTS = 1000;

describe(`A2AServer under load: ${CONTEXTS} concurrent contexts on one instance (SDK client)`, function () {
  // Two turns for each of 1,000 contexts on a shared machine; the assertion is on content, not time.
  this.timeout(180_000);

  it('every context remembers its own name: no cross-talk', async () => {
    const emulator = await Emulator.start();
    const agent = new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test' }), name: 'assistant' });
    const server = new A2AServer({ agent, logger: { warn: () => {}, error: () => {} } });
    await server.listen();
    try {
      const client = await new ClientFactory().createFromUrl(server.url!);
      const send = async (text: string, contextId?: string): Promise<Task> => {
        const result = await client.sendMessage({ tenant: '', message: userMessage(text, { contextId }), configuration: undefined, metadata: undefined });
        if ('messageId' in result) throw new Error('expected a task');
        return result;
      };
      const names = Array.from({ length: CONTEXTS }, (_, i) => `Person${i}`);
      const firsts = await Promise.all(names.map((name) => send(`My name is ${name}`)));
      expect(new Set(firsts.map((t) => t.contextId)).size).to.equal(CONTEXTS);
      const answers = await Promise.all(firsts.map((t) => send("What's my name?", t.contextId)));
      const wrong = answers.filter((t, i) => !t.artifacts.map((a) => partsText(a.parts)).join('').includes(`${names[i]}.`));
      expect(wrong.map((t) => t.artifacts.map((a) => partsText(a.parts)).join(''))).to.deep.equal([]);
    } finally {
      await server.close();
      await emulator.stop();
    }
  });
});
