import type { AbstractNewable } from 'inversify';
import type { AIAgent } from '../agents/ai-agent.js';
import type { DurableAgent } from '../durable/durable-runner.js';

/**
 * The service identifier of a configured agent. It is typed, so `container.get(agentToken('x'))`
 * returns an AIAgent without a cast (inversify infers the type from an abstract-class identifier;
 * the token is never constructed).
 */
export type AgentToken = AbstractNewable<AIAgent>;

const tokens = new Map<string, AgentToken>();

export function agentToken(name: string): AgentToken {
  let token = tokens.get(name);
  if (!token) {
    const holder = { [`agent:${name}`]: class {} };
    token = holder[`agent:${name}`] as unknown as AgentToken;
    tokens.set(name, token);
  }
  return token;
}

/** The service identifier of a configured agent's durable face (agents with `durability` in their config). */
export type DurableAgentToken = AbstractNewable<DurableAgent>;

const durableTokens = new Map<string, DurableAgentToken>();

/**
 * @example
 * ```ts
 * const researcher = container.get(durableAgentToken('researcher'));
 * await container.get<DurableRunner>(DurableRunner, { name: 'dbos' }).launch();
 * ```
 */
export function durableAgentToken(name: string): DurableAgentToken {
  let token = durableTokens.get(name);
  if (!token) {
    const holder = { [`durable-agent:${name}`]: class {} };
    token = holder[`durable-agent:${name}`] as unknown as DurableAgentToken;
    durableTokens.set(name, token);
  }
  return token;
}
