import type { ChatAgent, DurableAgent, DurableAgentOptions, DurableRunner } from 'skein';

/**
 * Makes `agent`'s runs durable on `options.runner` (a `DbosDurableRunner`, or any DurableRunner).
 * Call it for every agent before `runner.launch()`, in every process that runs or recovers them.
 *
 * @example
 * ```ts
 * const runner = new DbosDurableRunner({ systemDatabaseUrl });
 * const researcher = durableAgent(agent, { runner, unrecordedTools: ['readSecret'] });
 * await runner.launch();
 * const runId = await researcher.start('Find three sources', { thread });
 * const result = await runner.getRun(runId);
 * ```
 */
export function durableAgent(agent: ChatAgent, options: DurableAgentOptions & { runner: DurableRunner }): DurableAgent {
  const { runner, ...rest } = options;
  return runner.durable(agent, rest);
}
