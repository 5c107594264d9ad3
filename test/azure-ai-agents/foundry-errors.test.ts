import type { AgentsClient } from '@azure/ai-agents';
import { expect } from 'chai';
import { AuthenticationError, ConnectionError, agentToken, createContainer, NotFoundError, type AIAgent } from 'skein';
import { AzureAIAgent, azureAIAgentsPlugin, createEmulatorAgentsClient, emulatorConnection } from 'skein/azure-ai-agents';
import { rejection } from '../support/async-expectations.js';
import { emulatorPerTest } from '../support/emulator.js';

describe('Foundry errors tell the truth (real @azure/ai-agents client against the emulator)', () => {
  const running = emulatorPerTest();
  let client: AgentsClient;

  beforeEach(() => {
    client = createEmulatorAgentsClient(running.url, { clientOptions: { retryOptions: { maxRetries: 0 } } });
  });

  it("a failing list call quotes the service's message, not the SDK's paging message", async () => {
    const agent = new AzureAIAgent({ client, model: 'gpt-4o', pollIntervalMs: 1 });
    const thread = agent.getNewThread();
    await agent.run('My name is Ada.', { thread });
    // Someone deleted the Foundry thread; the next turn first lists the thread's runs.
    await client.threads.delete(thread.serviceThreadId!);
    const error = await rejection(agent.run("What's my name?", { thread }));
    expect(error).to.be.instanceOf(NotFoundError);
    expect(error.message).to.contain(`No thread found with id '${thread.serviceThreadId}'`);
    expect(error.message).not.to.contain('Pagination failed');
    expect((error as NotFoundError).status).to.equal(404);
  });

  it('a credential whose getToken throws is an AuthenticationError naming the cause (plugin config)', async () => {
    const connection = emulatorConnection(running.emulator.url);
    const container = await createContainer({
      plugins: [
        azureAIAgentsPlugin({
          endpoint: connection.endpoint,
          clientOptions: { ...connection.clientOptions, retryOptions: { maxRetries: 0 } },
          credential: {
            getToken: async () => {
              throw new Error('AADSTS7000215: Invalid client secret provided.');
            },
          },
        }),
      ],
      agents: { helper: { client: 'azure-ai-agents', model: 'gpt-4o' } },
    });
    const agent = container.get<AIAgent>(agentToken('helper'));
    const error = await rejection(agent.run('hi'));
    expect(error).to.be.instanceOf(AuthenticationError);
    expect(error).not.to.be.instanceOf(ConnectionError);
    expect(error.message).to.contain('AADSTS7000215: Invalid client secret provided.');
    expect(error.message).to.contain('check the credential');
    // Nothing reached the service.
    expect(running.emulator.requests).to.have.length(0);
  });

  it('an unreachable service is still a ConnectionError, not an AuthenticationError', async () => {
    const url = running.emulator.url;
    await running.emulator.stop();
    const agent = new AzureAIAgent({ client: createEmulatorAgentsClient(url, { clientOptions: { retryOptions: { maxRetries: 0 } } }), model: 'gpt-4o' });
    const error = await rejection(agent.run('hi'));
    expect(error).to.be.instanceOf(ConnectionError);
  });
});
