import { ChatClientMiddleware, ConfigurationError, type SkeinPlugin, ToolReferenceResolver, containerModule } from 'skein';
import { mcpToolImages } from './mcp-tool-images.js';
import { MCP_REFERENCE_PREFIX, McpServerRegistry, mcpReferenceProblem } from './mcp-server-registry.js';
import { type McpServerConfig, isStdioConfig, pluginConfigSchema } from './mcp-server-config.js';

export interface McpPluginOptions {
  /** Server name -> how to reach it; agents name them as `mcp:<server>` in their tools. */
  servers: Record<string, McpServerConfig>;
}

/**
 * MCP servers for the agents of a container: an agent lists `mcp:<server>` (all its tools) or
 * `mcp:<server>/<pattern>` in `tools`. Each server connects on the first run that needs it, once
 * per container; `await container.unbindAllAsync()` closes the connections (and stops stdio servers).
 *
 * @example
 * const container = createContainer({
 *   plugins: [openaiPlugin({ apiKey }), mcpPlugin({ servers: { files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', './docs'] } } })],
 *   agents: { helper: { client: 'openai-chat', model: 'gpt-4.1', tools: ['mcp:files'] } },
 * });
 */
export function mcpPlugin(options: McpPluginOptions): SkeinPlugin {
  const servers = options?.servers;
  if (!servers || typeof servers !== 'object') throw new ConfigurationError('mcpPlugin needs { servers: { <name>: { command, args } | { url, headers } } }.');
  for (const [name, config] of Object.entries(servers)) {
    if (!config || (!isStdioConfig(config) && typeof (config as { url?: unknown }).url !== 'string')) {
      throw new ConfigurationError(`plugins.mcp.servers.${name}: expected a stdio server ({ command, args?, env?, cwd? }) or an HTTP server ({ url, headers? }).`);
    }
  }
  const names = Object.keys(servers);
  return {
    id: 'mcp',
    toolReferences: { prefix: MCP_REFERENCE_PREFIX, check: (reference) => mcpReferenceProblem(reference, names) },
    module: containerModule(({ bind }) => {
      bind(McpServerRegistry)
        .toDynamicValue(() => new McpServerRegistry(servers))
        .inSingletonScope()
        .onDeactivation((registry) => registry.dispose());
      bind<ToolReferenceResolver>(ToolReferenceResolver)
        .toDynamicValue((context) => {
          const registry = context.get(McpServerRegistry);
          return { prefix: MCP_REFERENCE_PREFIX, resolve: (reference: string) => registry.resolve(reference) };
        })
        .inSingletonScope();
      // The images MCP tools return reach the model as image content (see mcpToolImages).
      bind<ChatClientMiddleware>(ChatClientMiddleware).toConstantValue(mcpToolImages());
    }),
  };
}
mcpPlugin.configSchema = pluginConfigSchema;
