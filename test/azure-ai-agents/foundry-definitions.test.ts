import type { Agent, AgentsClient } from '@azure/ai-agents';
import { expect } from 'chai';
import { type AIAgent, agentToken, createContainer, DEFINITION_METADATA_KEY, definitionFingerprint, FINGERPRINT_METADATA_KEY, tool, type SkeinConfig } from 'skein';
import { AzureAIAgent, azureAIAgentsPlugin, createEmulatorAgentsClient, emulatorConnection } from 'skein/azure-ai-agents';
import { emulatorPerTest } from '../support/emulator.js';
import { z } from 'zod';

const weather = tool({
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `Sunny in ${city}`,
});

describe('Foundry agent definitions are idempotent (real @azure/ai-agents client, several containers)', () => {
  let client: AgentsClient;

  const agentsOnService = async (): Promise<Agent[]> => {
    const agents: Agent[] = [];
    for await (const agent of client.listAgents()) agents.push(agent);
    return agents;
  };
  /** A fresh container, as a new process would build it from the same config. */
  const containerAgent = async (instructions = 'You are helpful.'): Promise<AzureAIAgent> => {
    const config: SkeinConfig = {
      plugins: [azureAIAgentsPlugin({ ...emulatorConnection(running.emulator.url), pollIntervalMs: 1 })],
      tools: [weather],
      agents: { support: { client: 'azure-ai-agents', model: 'gpt-4o', instructions, tools: ['get_weather'] } },
    };
    const container = await createContainer(config);
    return container.get<AIAgent>(agentToken('support')) as AzureAIAgent;
  };

  const running = emulatorPerTest();
  beforeEach(() => {
    client = createEmulatorAgentsClient(running.emulator.url);
  });

  it('four containers with the same definition run one Foundry agent, created once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const agent = await containerAgent();
      expect((await agent.run('My name is Ada.')).text).to.equal('Nice to meet you, Ada!');
      ids.push(await agent.getFoundryAgentId());
    }
    const agents = await agentsOnService();
    expect(agents).to.have.length(1);
    expect(new Set(ids)).to.deep.equal(new Set([agents[0].id]));
    expect(agents[0].name).to.equal('support');
    expect(agents[0].metadata?.[FINGERPRINT_METADATA_KEY]).to.match(/^[0-9a-f]{32}$/);
    expect(agents[0].metadata?.[DEFINITION_METADATA_KEY]).to.equal(`name:${agents[0].name}`);
    expect(running.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/assistants'))).to.have.length(1);
  });

  it('containers started together still end with one agent', async () => {
    const agents = await Promise.all([containerAgent(), containerAgent(), containerAgent()]);
    const ids = await Promise.all(agents.map((a) => a.getFoundryAgentId()));
    const remaining = await agentsOnService();
    expect(remaining).to.have.length(1);
    expect(new Set(ids)).to.deep.equal(new Set([remaining[0].id]));
  });

  it('a changed definition updates the agent in place; the fingerprint follows the definition', async () => {
    const first = await containerAgent('You are helpful.');
    const id = await first.getFoundryAgentId();
    const before = (await agentsOnService())[0].metadata?.[FINGERPRINT_METADATA_KEY];

    const changed = await containerAgent('You answer in French.');
    expect(await changed.getFoundryAgentId()).to.equal(id);
    const [agent] = await agentsOnService();
    expect(agent.instructions).to.equal('You answer in French.');
    expect(agent.metadata?.[FINGERPRINT_METADATA_KEY]).to.be.a('string').and.not.equal(before);
    expect(running.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`/assistants/${id}`))).to.have.length(1);
  });

  it('an agent of another name, or not made by Skein, is never taken over', async () => {
    const handMade = await client.createAgent('gpt-4o', { name: 'support', instructions: 'Made in the portal.' });
    const agent = await containerAgent();
    expect(await agent.getFoundryAgentId()).not.to.equal(handMade.id);
    expect((await client.getAgent(handMade.id)).instructions).to.equal('Made in the portal.');
    expect(await agentsOnService()).to.have.length(2);
  });

  it('the fingerprint is the shared definitionFingerprint of the definition', async () => {
    const agent = new AzureAIAgent({ client, model: 'gpt-4o', name: 'plain', instructions: 'Be brief.', pollIntervalMs: 1 });
    await agent.run('hi');
    const [made] = await agentsOnService();
    const expected = definitionFingerprint({ model: 'gpt-4o', name: 'plain', instructions: 'Be brief.', tools: [] });
    expect(made.metadata?.[FINGERPRINT_METADATA_KEY]).to.equal(expected);
  });

  it('a resumed thread uses the Foundry agent it was made with, even when the config now names another', async () => {
    const agent = await containerAgent();
    const thread = agent.getNewThread();
    await agent.run('My name is Ada.', { thread });
    const madeWith = await agent.getFoundryAgentId();
    const saved = JSON.parse(JSON.stringify(await thread.serialize()));

    // Another process is configured with a different, existing agent id.
    const other = await client.createAgent('gpt-4o', { name: 'other' });
    const container = await createContainer({
      plugins: [azureAIAgentsPlugin({ ...emulatorConnection(running.emulator.url), pollIntervalMs: 1 })],
      agents: { support: { client: 'azure-ai-agents', agentId: other.id } },
    });
    const resumedAgent = container.get<AIAgent>(agentToken('support'));
    const resumed = await resumedAgent.deserializeThread(saved);
    expect((await resumedAgent.run("What's my name?", { thread: resumed })).text).to.equal('Your name is Ada.');
    const runs = running.emulator.requests.filter((r) => r.method === 'POST' && /\/threads\/[^/]+\/runs$/.test(r.path));
    expect((runs.at(-1)!.body as { assistant_id: string }).assistant_id).to.equal(madeWith);
  });

  it('deleteAgentDefinition deletes the definition\'s agent, even from a container that never ran it', async () => {
    await (await containerAgent()).run('hi');
    expect(await agentsOnService()).to.have.length(1);
    await (await containerAgent()).deleteAgentDefinition();
    expect(await agentsOnService()).to.have.length(0);
  });

  it('finds its agent among more agents than one list page holds', async () => {
    for (let i = 0; i < 120; i++) await client.createAgent('gpt-4o', { name: `other-${i}` });
    await (await containerAgent()).run('hi');
    const again = await containerAgent();
    await again.run('hi again');
    expect(running.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/assistants'))).to.have.length(121);
    const pages = running.emulator.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/assistants'));
    expect(pages.at(-1)!.query.after).to.be.a('string');
  });
});
