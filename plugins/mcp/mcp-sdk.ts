import { ConfigurationError } from 'skein';

const PACKAGE = '@modelcontextprotocol/sdk';

type ClientModule = typeof import('@modelcontextprotocol/sdk/client/index.js');
type StdioModule = typeof import('@modelcontextprotocol/sdk/client/stdio.js');
type StreamableHttpModule = typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js');
type SseModule = typeof import('@modelcontextprotocol/sdk/client/sse.js');
type TypesModule = typeof import('@modelcontextprotocol/sdk/types.js');

/** The parts of the MCP SDK the client side uses, loaded together on first connect. */
export interface McpClientSdk {
  Client: ClientModule['Client'];
  StdioClientTransport: StdioModule['StdioClientTransport'];
  getDefaultEnvironment: StdioModule['getDefaultEnvironment'];
  StreamableHTTPClientTransport: StreamableHttpModule['StreamableHTTPClientTransport'];
  SSEClientTransport: SseModule['SSEClientTransport'];
  types: TypesModule;
}

let loading: Promise<McpClientSdk> | undefined;

/**
 * The SDK is imported on first use, not when `skein/mcp` is imported, so an app that names no
 * MCP server never loads it; a missing SDK is a ConfigurationError that names the package.
 */
export function loadMcpClientSdk(): Promise<McpClientSdk> {
  loading ??= Promise.all([
    importSdk<ClientModule>(() => import('@modelcontextprotocol/sdk/client/index.js')),
    importSdk<StdioModule>(() => import('@modelcontextprotocol/sdk/client/stdio.js')),
    importSdk<StreamableHttpModule>(() => import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
    importSdk<SseModule>(() => import('@modelcontextprotocol/sdk/client/sse.js')),
    importSdk<TypesModule>(() => import('@modelcontextprotocol/sdk/types.js')),
  ]).then(([client, stdio, http, sse, types]) => ({
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    SSEClientTransport: sse.SSEClientTransport,
    types,
  }));
  loading.catch(() => (loading = undefined)); // installing the package later in the same process works
  return loading;
}

export async function importSdk<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes(PACKAGE)) {
      throw new ConfigurationError(`MCP support needs the package ${PACKAGE} (1.x), which is not installed. Install it: npm install ${PACKAGE}@^1`);
    }
    throw error;
  }
}
