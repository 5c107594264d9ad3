import type { FunctionToolDefinition, RunsCreateRunOptionalParams, ToolDefinitionUnion } from '@azure/ai-agents';
import type { ChatOptions } from 'skein';

/**
 * Foundry run parameters a caller may set as provider options (`ChatOptions.additionalProperties`,
 * or keys of the agent config): each goes to every run as is.
 */
export const FOUNDRY_RUN_OPTIONS = ['topP', 'maxPromptTokens', 'truncationStrategy', 'responseFormat', 'parallelToolCalls', 'metadata'] as const;

/** The Foundry agent a call runs: what its runs inherit unless overridden. */
export interface BoundAgent {
  id: string;
  model: string | undefined;
  instructions: string | undefined;
  tools: ToolDefinitionUnion[];
}

/**
 * A run's overrides of its agent: model, extra instructions (the call's and the system messages'),
 * tools the agent lacks, tool choice, sampling, and the provider options in `FOUNDRY_RUN_OPTIONS`.
 */
export function foundryRunOptions(agent: BoundAgent, options: ChatOptions, systemText: string[]): RunsCreateRunOptionalParams {
  const run: RunsCreateRunOptionalParams = {};
  if (options.model !== undefined && options.model !== agent.model) run.model = options.model;
  const extra = [...(options.instructions && options.instructions !== agent.instructions ? [options.instructions] : []), ...systemText];
  if (extra.length > 0) run.additionalInstructions = extra.join('\n');
  const wanted = (options.tools ?? []).map(toFunctionTool);
  const have = new Set(agent.tools.filter(isFunctionTool).map((t) => t.function.name));
  if (wanted.some((t) => !have.has(t.function.name))) {
    const names = new Set(wanted.map((t) => t.function.name));
    run.tools = [...agent.tools.filter((t) => !isFunctionTool(t) || !names.has(t.function.name)), ...wanted];
  }
  if (options.toolChoice === 'none' || options.toolChoice === 'auto') run.toolChoice = options.toolChoice;
  if (options.temperature !== undefined) run.temperature = options.temperature;
  if (options.topP !== undefined) run.topP = options.topP;
  if (options.maxOutputTokens !== undefined) run.maxCompletionTokens = options.maxOutputTokens;
  const provided = options.additionalProperties ?? {};
  for (const key of FOUNDRY_RUN_OPTIONS) {
    if (provided[key] !== undefined) (run as Record<string, unknown>)[key] = provided[key];
  }
  return run;
}

export function toFunctionTool(tool: NonNullable<ChatOptions['tools']>[number]): FunctionToolDefinition {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

export function isFunctionTool(tool: ToolDefinitionUnion): tool is FunctionToolDefinition {
  return tool.type === 'function' && 'function' in tool;
}
