import type { ParseArgsConfig } from 'node:util';
import type { Container } from 'inversify';
import type { AIAgent } from '../../agents/ai-agent.js';
import { agentToken, durableAgentToken } from '../../container/agent-token.js';
import type { SkeinConfig } from '../../container/skein-config.js';
import { type DurableAgent, DurableRunner } from '../../durable/durable-runner.js';
import { ConfigurationError } from '../../errors/skein-error.js';
import { parsePort } from '../../testing/emulator/cli.js';
import { UsageError } from '../cli-error.js';
import { printedHelp, type CliIO } from '../cli-io.js';

/** The options every `skein <protocol> serve` command takes: the config, its agents, where to listen, the threads. */
export const SERVE_OPTIONS = {
  config: { type: 'string' },
  agent: { type: 'string', multiple: true },
  port: { type: 'string' },
  host: { type: 'string' },
  expose: { type: 'boolean' },
  'allowed-host': { type: 'string', multiple: true },
  'threads-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

/**
 * Checks `skein <command> serve ...` as parsed with `SERVE_OPTIONS` (and the command's own):
 * undefined after printing `help` for --help; a UsageError for another subcommand or no --config.
 */
export function serveArgs<V extends { help?: boolean; config?: string }>(command: string, help: string, io: CliIO, parsed: { values: V; positionals: string[] }): (V & { config: string }) | undefined {
  const { values, positionals } = parsed;
  if (printedHelp(values, io, help)) return undefined;
  if (positionals[0] !== 'serve' || positionals.length > 1) throw new UsageError(`expected "skein ${command} serve ...", found "skein ${command} ${positionals.join(' ')}"`, command);
  if (!values.config) throw new UsageError('--config <file> is required', command);
  return { ...values, config: values.config };
}

/** The port to listen on, from `value` (an option, $PORT or a default); a bad one is a UsageError of `command`. */
export function servePort(value: string, command: string): number {
  try {
    return parsePort(value);
  } catch (error) {
    throw new UsageError((error as Error).message, command);
  }
}

/** The named agents of the container; every name `config` does not define is one ConfigurationError problem. */
export function servedAgents(container: Container, names: readonly string[], config: string): Record<string, AIAgent> {
  const missing = names.filter((name) => !container.isBound(agentToken(name)));
  if (missing.length) throw new ConfigurationError(missing.map((name) => `agents.${name}: ${config} defines no agent named "${name}".`));
  return Object.fromEntries(names.map((name) => [name, container.get<AIAgent>(agentToken(name))]));
}

/** A configured agent's durable face (`durability:` in its config) and the engine's runner. */
export interface ServedDurableAgent {
  agent: DurableAgent;
  runner: DurableRunner;
}

/**
 * The durable faces of the named agents that have one (the others are left out), resolved before
 * the engine launches: the engine registers its workflows only for agents made durable before
 * `launch()`. Launches each engine once; stop them with `shutdownDurable`.
 */
export async function launchDurableAgents(container: Container, names: readonly string[], agents: SkeinConfig['agents']): Promise<Map<string, ServedDurableAgent>> {
  const faces = new Map<string, ServedDurableAgent>();
  for (const name of names) {
    const engine = agents?.[name]?.durability?.engine;
    if (engine === undefined || !container.isBound(durableAgentToken(name))) continue;
    faces.set(name, { agent: container.get<DurableAgent>(durableAgentToken(name)), runner: container.get<DurableRunner>(DurableRunner, { name: engine }) });
  }
  for (const runner of new Set([...faces.values()].map((f) => f.runner))) await runner.launch();
  return faces;
}

/** Shuts down the engines `launchDurableAgents` launched. */
export async function shutdownDurable(faces: ReadonlyMap<string, ServedDurableAgent>): Promise<void> {
  for (const runner of new Set([...faces.values()].map((f) => f.runner))) await runner.shutdown();
}
