/**
 * A Foundry (Azure AI) agent with a local tool and a conversation that survives a restart.
 *
 *   AZURE_AI_PROJECT_ENDPOINT=https://<resource>.services.ai.azure.com/api/projects/<project> \
 *   AZURE_AI_MODEL=gpt-4o node dist/samples/foundry-agent.js
 *
 * With AZURE_AI_PROJECT_ENDPOINT set it talks to real Foundry with `DefaultAzureCredential`
 * (install `@azure/identity` and sign in with `az login`). Without it, it starts Skein's offline
 * emulator and runs the same code against it.
 */
import 'reflect-metadata';
import type { AgentsClientOptionalParams } from '@azure/ai-agents';
import type { TokenCredential } from '@azure/core-auth';
import { agentToken, createContainer, tool } from 'skein';
import { AzureAIAgent, azureAIAgentsPlugin, emulatorConnection } from 'skein/azure-ai-agents';
import { Emulator } from 'skein/testing';
import { z } from 'zod';

const weather = tool({
  name: 'get_weather',
  description: 'The current weather in a city.',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `Sunny and 21 °C in ${city}`,
});

interface Connection {
  endpoint: string;
  credential: TokenCredential;
  clientOptions?: AgentsClientOptionalParams;
  stop: () => Promise<void>;
}

async function connection(): Promise<Connection> {
  const endpoint = process.env.AZURE_AI_PROJECT_ENDPOINT;
  if (endpoint) {
    // Imported by name at run time so the sample builds without @azure/identity installed.
    const identity = '@azure/identity';
    const { DefaultAzureCredential } = (await import(identity)) as { DefaultAzureCredential: new () => TokenCredential };
    return { endpoint, credential: new DefaultAzureCredential(), stop: async () => {} };
  }
  const emulator = await Emulator.start();
  console.log(`(no AZURE_AI_PROJECT_ENDPOINT: using the offline emulator at ${emulator.url})\n`);
  // An https:// endpoint plus an httpClient that rewrites to http: the SDK sends bearer tokens only over TLS.
  return { ...emulatorConnection(emulator.url), stop: () => emulator.stop() };
}

async function main(): Promise<void> {
  const conn = await connection();
  const config = () => ({
    plugins: [azureAIAgentsPlugin({ endpoint: conn.endpoint, credential: conn.credential, clientOptions: conn.clientOptions, pollIntervalMs: process.env.AZURE_AI_PROJECT_ENDPOINT ? 500 : 10 })],
    tools: [weather],
    agents: {
      concierge: {
        client: 'azure-ai-agents',
        model: process.env.AZURE_AI_MODEL ?? 'gpt-4o',
        instructions: 'You are a concise travel concierge.',
        tools: ['get_weather'],
      },
    },
  });

  const agent = createContainer(config()).get(agentToken('concierge')) as AzureAIAgent;
  const thread = agent.getNewThread();
  try {
    console.log('> My name is Ada.');
    console.log((await agent.run('My name is Ada.', { thread })).text);

    console.log('> What is the weather in Lisbon?');
    const updates = agent.runStream('What is the weather in Lisbon?', { thread });
    await new Promise<void>((resolve, reject) =>
      updates.subscribe({ next: (u) => process.stdout.write(u.text), error: reject, complete: () => resolve() }),
    );
    console.log();

    // The conversation is only a Foundry thread id: save it, and continue anywhere.
    const saved = JSON.stringify(await thread.serialize());
    console.log(`\n(saved thread: ${saved})\n`);
    const restarted = createContainer(config()).get(agentToken('concierge')) as AzureAIAgent;
    const resumed = await restarted.deserializeThread(JSON.parse(saved));
    // Definitions are idempotent: the new container finds the Foundry agent the first one created.
    console.log(`(same Foundry agent: ${(await restarted.getFoundryAgentId()) === (await agent.getFoundryAgentId())})`);
    console.log("> What's my name?");
    console.log((await restarted.run("What's my name?", { thread: resumed })).text);

    await restarted.deleteThread(resumed);
    // One explicit delete removes the definition's agent, whichever container asks.
    await restarted.deleteAgentDefinition();
  } finally {
    await conn.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
