/**
 * OpenTelemetry GenAI semantic-convention names (gen_ai.* is still "development" upstream, so
 * the names are kept here rather than imported from a package whose exports may move).
 */
export const GenAI = {
  OPERATION_NAME: 'gen_ai.operation.name',
  PROVIDER_NAME: 'gen_ai.provider.name',
  /** The name before `gen_ai.provider.name` replaced it; still read by many backends. */
  SYSTEM: 'gen_ai.system',
  AGENT_NAME: 'gen_ai.agent.name',
  AGENT_DESCRIPTION: 'gen_ai.agent.description',
  CONVERSATION_ID: 'gen_ai.conversation.id',
  REQUEST_MODEL: 'gen_ai.request.model',
  REQUEST_TEMPERATURE: 'gen_ai.request.temperature',
  REQUEST_TOP_P: 'gen_ai.request.top_p',
  REQUEST_MAX_TOKENS: 'gen_ai.request.max_tokens',
  REQUEST_SEED: 'gen_ai.request.seed',
  REQUEST_STOP_SEQUENCES: 'gen_ai.request.stop_sequences',
  RESPONSE_ID: 'gen_ai.response.id',
  RESPONSE_MODEL: 'gen_ai.response.model',
  RESPONSE_FINISH_REASONS: 'gen_ai.response.finish_reasons',
  USAGE_INPUT_TOKENS: 'gen_ai.usage.input_tokens',
  USAGE_OUTPUT_TOKENS: 'gen_ai.usage.output_tokens',
  TOOL_NAME: 'gen_ai.tool.name',
  TOOL_CALL_ID: 'gen_ai.tool.call.id',
  TOOL_TYPE: 'gen_ai.tool.type',
  TOOL_DESCRIPTION: 'gen_ai.tool.description',
  TOOL_CALL_ARGUMENTS: 'gen_ai.tool.call.arguments',
  TOOL_CALL_RESULT: 'gen_ai.tool.call.result',
  INPUT_MESSAGES: 'gen_ai.input.messages',
  OUTPUT_MESSAGES: 'gen_ai.output.messages',
  SYSTEM_INSTRUCTIONS: 'gen_ai.system_instructions',
  ERROR_TYPE: 'error.type',
} as const;

export const GenAIOperation = {
  INVOKE_AGENT: 'invoke_agent',
  CHAT: 'chat',
  EXECUTE_TOOL: 'execute_tool',
} as const;

/** Skein's client id for the client's provider, as the semantic conventions name providers. */
export function providerName(clientId: string): string {
  if (clientId === 'openai' || clientId.startsWith('openai-')) return 'openai';
  if (clientId === 'azure-ai-agents') return 'azure.ai.agents';
  return clientId;
}

/** Where a tool lives when it is not a local function (`AITool.source`): `mcp`, its server, its own name there. */
export const TOOL_SOURCE_KIND = 'skein.tool.source.kind';
export const TOOL_SOURCE_SERVER = 'skein.tool.source.server';
export const TOOL_SOURCE_NAME = 'skein.tool.source.name';
/** `true` on the span of a call the AI service made itself (a hosted MCP tool): it reports the call, it did not time it. */
export const TOOL_HOSTED = 'skein.tool.hosted';
