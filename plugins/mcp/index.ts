export * from './mcp-errors.js';
export * from './mcp-server-config.js';
export * from './mcp-result.js';
export * from './mcp-connection.js';
export * from './mcp-tool.js';
export * from './mcp-server.js';
export * from './mcp-server-registry.js';
export * from './mcp-plugin.js';
