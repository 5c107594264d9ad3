import { registerErrorClass, SkeinError } from 'skein';

/**
 * A failure talking to an MCP server. `server` is the configured name and `target` says where it
 * is (the command line or the URL), never its environment, headers or URL credentials.
 */
export class McpError extends SkeinError {
  readonly server: string;
  readonly target: string;
  constructor(server: string, target: string, message: string, options?: { cause?: unknown }) {
    super(`MCP server "${server}" (${target}): ${message}`, options);
    this.server = server;
    this.target = target;
  }
}

/** The server could not be started, reached, or initialized, or the connection broke. */
export class McpConnectionError extends McpError {}

/** A call (or the tool listing) took longer than the configured timeout. */
export class McpTimeoutError extends McpError {
  readonly timeoutMs: number;
  constructor(server: string, target: string, message: string, timeoutMs: number, options?: { cause?: unknown }) {
    super(server, target, message, options);
    this.timeoutMs = timeoutMs;
  }
}

// So a durable run failed by one of these is rebuilt as the same class by getRun in any process.
for (const errorClass of [McpError, McpConnectionError, McpTimeoutError]) registerErrorClass(errorClass);
