import type { Container } from 'inversify';
import type { AIAgent } from '../agents/ai-agent.js';
import { agentToken, durableAgentToken } from '../container/agent-token.js';
import { type DurableAgent, DurableRunner } from '../durable/durable-runner.js';
import type { AgentInfo } from './devui-api-types.js';
import { HttpError } from './devui-http.js';
import type { ThreadIndex, ThreadIndexEntry } from './thread-index.js';
import type { TurnTraces } from './turn-traces.js';

/** A turn in flight, which the stop button (or closing the Dev UI) ends. */
export interface ActiveRun {
  threadId?: string;
  stop: () => void;
}

/** The turn-trace collector (none without the OpenTelemetry SDK) and whether traces keep message content. */
export interface DevUITracing {
  collector: TurnTraces | undefined;
  captureContent: boolean;
}

/** What every route group of one Dev UI shares: its agents, its thread index, the turns running and the traces. */
export class DevUIState {
  readonly runs = new Map<string, ActiveRun>();
  readonly busyThreads = new Set<string>();

  constructor(
    readonly container: Container,
    readonly agents: ReadonlyMap<string, AgentInfo>,
    readonly index: ThreadIndex,
    readonly tracing: DevUITracing,
  ) {}

  agent(name: unknown): AIAgent {
    if (typeof name !== 'string' || !this.agents.has(name)) {
      throw new HttpError(400, `Unknown agent ${JSON.stringify(name)}; configured agents: ${[...this.agents.keys()].join(', ') || 'none'}.`);
    }
    return this.container.get(agentToken(name));
  }

  /** The durable face of an agent configured with `durability:`, and the engine's runner; undefined for other agents. */
  durable(name: string): { agent: DurableAgent; runner: DurableRunner } | undefined {
    if (!this.agents.get(name)?.durable) return undefined;
    return { agent: this.container.get(durableAgentToken(name)), runner: this.container.get<DurableRunner>(DurableRunner) };
  }

  /** Makes every durable agent durable, then launches the engine, which recovers the runs left unfinished; the runner, if any agent is durable. */
  async launchDurable(): Promise<DurableRunner | undefined> {
    const names = [...this.agents.values()].filter((a) => a.durable).map((a) => a.name);
    if (!names.length) return undefined;
    // The engine registers its workflows only before it launches: every durable face first.
    for (const name of names) this.container.get(durableAgentToken(name));
    const runner = this.container.get<DurableRunner>(DurableRunner);
    await runner.launch();
    return runner;
  }

  async entry(id: string): Promise<ThreadIndexEntry> {
    const entry = await this.index.get(id);
    if (!entry) throw new HttpError(404, `No thread "${id}" in the Dev UI's thread index (${this.index.directory}).`);
    return entry;
  }

  /** Refuses to change a thread while a turn runs on it; `instead` says what to do. */
  assertIdle(threadId: string, instead: string): void {
    if (this.busyThreads.has(threadId)) throw new HttpError(409, `This thread is running a turn; ${instead}.`, 'ThreadBusyError');
  }
}
