import type { ResolutionContext } from 'inversify';
import type { AIAgent } from '../agents/ai-agent.js';
import type { AgentConfig } from './skein-config.js';

/**
 * Builds the agent for a config entry whose client names this factory. Plugins whose agents
 * are not plain ChatAgents (e.g. Assistants) bind one named by their client id.
 */
export const AgentFactory = Symbol('AgentFactory');
export interface AgentFactory {
  createAgent(name: string, config: AgentConfig, context: ResolutionContext): AIAgent;
}
