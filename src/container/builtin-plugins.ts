/**
 * Built-in plugins, found by id in this package, with the client and store ids each provides (so
 * when one fails to load, agents naming its clients are not reported a second time).
 */
export const BUILTIN_PLUGINS: Readonly<Record<string, BuiltinPlugin>> = {
  openai: { module: 'skein/openai', export: 'openaiPlugin', clients: ['openai-chat', 'openai-responses', 'openai-assistants'] },
  sqlite: { module: 'skein/store-sqlite', export: 'sqliteStorePlugin', stores: ['sqlite'] },
  redis: { module: 'skein/store-redis', export: 'redisStorePlugin', stores: ['redis'] },
  postgres: { module: 'skein/store-postgres', export: 'postgresStorePlugin', stores: ['postgres'] },
  'azure-ai-agents': { module: 'skein/azure-ai-agents', export: 'azureAIAgentsPlugin', clients: ['azure-ai-agents'] },
  a2a: { module: 'skein/a2a', export: 'a2aPlugin', clients: ['a2a'] },
  telemetry: { module: 'skein/telemetry', export: 'telemetryPlugin' },
  mcp: { module: 'skein/mcp', export: 'mcpPlugin', toolPrefixes: ['mcp'] },
  'ag-ui': { module: 'skein/ag-ui', export: 'agUiPlugin', clients: ['ag-ui'] },
  dbos: { module: 'skein/dbos', export: 'dbosPlugin' },
};

export interface BuiltinPlugin {
  module: string;
  export: string;
  clients?: readonly string[];
  stores?: readonly string[];
  toolPrefixes?: readonly string[];
}
