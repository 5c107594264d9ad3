import { expect } from 'chai';
import { ChatAgent } from 'skein';
import { OpenAIChatClient } from 'skein/openai';
import { useEmulator } from '../support/emulator.js';

describe('Azure OpenAI through the SDK AzureOpenAI client', () => {
  const emu = useEmulator({ apiKey: 'azure-key' });

  it('runs a multi-turn conversation against a deployment path with api-version', async () => {
    const agent = new ChatAgent({
      chatClient: OpenAIChatClient.azure({ endpoint: emu.url, apiKey: 'azure-key', apiVersion: '2024-10-21', deployment: 'gpt-4o-prod' }),
    });
    const thread = agent.getNewThread();
    await agent.run('My name is Alice', { thread });
    expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Alice.');
    const request = emu.emulator.requests.at(-1)!;
    expect(request.path).to.equal('/openai/deployments/gpt-4o-prod/chat/completions');
    expect(request.query['api-version']).to.equal('2024-10-21');
    expect(request.headers['api-key']).to.equal('azure-key');
  });
});
