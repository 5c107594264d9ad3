import path from 'node:path';
import type { Container } from 'inversify';
import type { AIAgent } from '../agents/ai-agent.js';
import { agentToken } from '../container/agent-token.js';
import { readConfigFile } from '../container/config-file.js';
import { createContainer } from '../container/create-container.js';
import { ConfigurationError } from '../errors/skein-error.js';

export interface LoadedAgent {
  agent: AIAgent;
  container: Container;
  /** The absolute config path. */
  config: string;
}

/**
 * Builds the container from a config file and resolves one agent. Every problem (the file's and
 * a missing agent) surfaces as a ConfigurationError listing them all.
 */
export async function loadAgent(configFile: string, agentName: string, cwd: string): Promise<LoadedAgent> {
  const config = path.resolve(cwd, configFile);
  const container = await createContainer(config);
  const token = agentToken(agentName);
  if (!container.isBound(token)) {
    const { config: parsed } = await readConfigFile(config);
    const names = Object.keys(parsed.agents ?? {});
    throw new ConfigurationError(
      `agents.${agentName}: ${config} defines no agent named "${agentName}"; agents: ${names.join(', ') || 'none'}.`,
    );
  }
  return { agent: container.get(token), container, config };
}
