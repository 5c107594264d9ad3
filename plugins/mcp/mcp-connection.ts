import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { AbortError, whenAborted } from 'skein';
import { McpConnectionError, McpTimeoutError } from './mcp-errors.js';
import type { McpCallResult } from './mcp-result.js';
import { type McpClientSdk, loadMcpClientSdk } from './mcp-sdk.js';
import { type McpServerConfig, describeTarget, isStdioConfig } from './mcp-server-config.js';

/** A tool as the server lists it. */
export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  title?: string;
}

const DEFAULT_CALL_TIMEOUT_MS = 60_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** JSON-RPC codes the SDK uses for its own failures. */
const REQUEST_TIMEOUT = -32001;
const CONNECTION_CLOSED = -32000;
const STDERR_KEPT = 2000;

/**
 * One connection to one MCP server, opened on first use and shared by every tool of the server.
 * After the connection fails or the server exits, the next use opens a new one. The tool list is
 * cached until the server says it changed (`notifications/tools/list_changed`) or it reconnects.
 */
export class McpConnection {
  readonly target: string;
  readonly #secrets: string[];
  #client: Promise<Client> | undefined;
  #tools: Promise<McpToolInfo[]> | undefined;
  #stderr = '';
  #closed = false;

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
  ) {
    this.target = describeTarget(config);
    this.#secrets = secretsOf(config);
  }

  /** Every tool the server lists (all pages), cached until the list changes. */
  listTools(signal?: AbortSignal): Promise<McpToolInfo[]> {
    const listing = (this.#tools ??= this.#listAll(signal));
    listing.catch(() => {
      if (this.#tools === listing) this.#tools = undefined;
    });
    return listing;
  }

  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallResult> {
    const client = await this.#connected(signal);
    const timeout = this.config.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    // A signal per call: the SDK leaves its abort listener on the signal it is given, and one run
    // signal may see many calls.
    const call = new AbortController();
    const unlink = whenAborted(signal, () => call.abort(signal.reason));
    try {
      // The SDK sends notifications/cancelled when the signal aborts, and on its own timeout.
      return (await client.callTool({ name, arguments: args }, undefined, { signal: call.signal, timeout })) as McpCallResult;
    } catch (error) {
      throw this.#translate(error, signal, `calling tool "${name}"`, timeout);
    } finally {
      unlink();
    }
  }

  /** Closes the connection (and stops a stdio server); a later use opens a new one. */
  async close(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    this.#tools = undefined;
    if (client) await client.then((c) => c.close(), () => undefined);
  }

  /** Closes for good: later use is an error (container disposal). */
  async dispose(): Promise<void> {
    this.#closed = true;
    await this.close();
  }

  async #listAll(signal?: AbortSignal): Promise<McpToolInfo[]> {
    const client = await this.#connected(signal);
    const timeout = this.config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    try {
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor }, { signal, timeout });
        tools.push(...(page.tools as McpToolInfo[]));
        cursor = page.nextCursor;
      } while (cursor);
    } catch (error) {
      throw this.#translate(error, signal, 'listing tools', timeout);
    }
    return tools;
  }

  #connected(signal?: AbortSignal): Promise<Client> {
    if (this.#closed) {
      return Promise.reject(new McpConnectionError(this.name, this.target, 'the connection was closed with its container; create a new container or server.'));
    }
    const connecting = (this.#client ??= this.#connect(signal));
    connecting.catch(() => {
      if (this.#client === connecting) this.#client = undefined;
    });
    return connecting;
  }

  async #connect(signal?: AbortSignal): Promise<Client> {
    const sdk = await loadMcpClientSdk();
    if (isStdioConfig(this.config)) return this.#open(sdk, this.#stdioTransport(sdk), signal);
    const url = new URL(this.config.url);
    const requestInit = { headers: this.config.headers ?? {} };
    const mode = this.config.transport ?? 'auto';
    if (mode === 'sse') return this.#open(sdk, new sdk.SSEClientTransport(url, { requestInit }), signal);
    try {
      return await this.#open(sdk, new sdk.StreamableHTTPClientTransport(url, { requestInit }), signal);
    } catch (error) {
      if (mode !== 'auto' || signal?.aborted || error instanceof McpTimeoutError) throw error;
      // Older servers speak only the legacy HTTP+SSE transport (the SDK's documented fallback).
      try {
        return await this.#open(sdk, new sdk.SSEClientTransport(url, { requestInit }), signal);
      } catch (sseError) {
        throw new McpConnectionError(
          this.name,
          this.target,
          scrub(`cannot connect over Streamable HTTP (${messageOf(error)}) nor over SSE (${messageOf(sseError)}). Check the URL and that the server is running.`, this.#secrets),
          { cause: scrubbedError(sseError, this.#secrets) },
        );
      }
    }
  }

  #stdioTransport(sdk: McpClientSdk): Transport {
    if (!isStdioConfig(this.config)) throw new TypeError('not a stdio server');
    const transport = new sdk.StdioClientTransport({
      command: this.config.command,
      args: this.config.args ?? [],
      env: { ...sdk.getDefaultEnvironment(), ...this.config.env },
      cwd: this.config.cwd,
      stderr: 'pipe',
    });
    // Keep the end of the server's stderr: it usually says why a server failed to start.
    this.#stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-STDERR_KEPT);
    });
    return transport;
  }

  async #open(sdk: McpClientSdk, transport: Transport, signal?: AbortSignal): Promise<Client> {
    const client = new sdk.Client({ name: 'skein', version: '0.1.0' }, { capabilities: {} });
    client.setNotificationHandler(sdk.types.ToolListChangedNotificationSchema, () => {
      this.#tools = undefined;
    });
    const timeout = this.config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    // The SDK only reports a reply it cannot read (to onerror) and keeps waiting for the answer:
    // while connecting, such a reply fails the connection at once instead of after the timeout.
    const unreadable = new Promise<never>((_, reject) => {
      client.onerror = (error) => {
        if (isUnreadableMessage(error)) reject(new NotJsonRpcError(error));
      };
    });
    try {
      await Promise.race([client.connect(transport, { signal, timeout }), unreadable]);
    } catch (error) {
      await client.close().catch(() => undefined);
      throw this.#translate(error, signal, 'connecting', timeout);
    } finally {
      client.onerror = undefined;
    }
    // The server went away (crash, exit, network): the next use reconnects.
    client.onclose = () => {
      if (this.#client) {
        void this.#client.then((current) => {
          if (current === client) {
            this.#client = undefined;
            this.#tools = undefined;
          }
        }, () => undefined);
      }
    };
    return client;
  }

  #translate(raw: unknown, signal: AbortSignal | undefined, during: string, timeout: number): Error {
    if (raw instanceof McpConnectionError || raw instanceof McpTimeoutError) return raw;
    const error = scrubbedError(raw, this.#secrets);
    if (signal?.aborted) return new AbortError(undefined, { cause: signal.reason });
    const code = (error as { code?: unknown }).code;
    if (code === REQUEST_TIMEOUT) {
      return new McpTimeoutError(this.name, this.target, `no answer within ${timeout} ms while ${during}. Raise timeoutMs${during === 'connecting' || during === 'listing tools' ? ' (connectTimeoutMs)' : ''} if the server is just slow.`, timeout, { cause: error });
    }
    // A JSON-RPC error from the server (bad arguments, unknown tool) is the call's own failure;
    // anything else (closed, refused, HTTP failure) means the connection is gone.
    if (code === CONNECTION_CLOSED || typeof code !== 'number' || code >= 0 || during === 'connecting') {
      // A failed connect cleans up after itself (and may still fall back to SSE): close only a live connection.
      if (during !== 'connecting') void this.close();
      const stderr = scrub(this.#stderr.trim(), this.#secrets);
      return new McpConnectionError(
        this.name,
        this.target,
        `failed while ${during}: ${messageOf(error)}${stderr ? `; the server wrote: ${stderr.slice(-500)}` : ''}. The next use reconnects.`,
        { cause: error },
      );
    }
    return error as Error;
  }
}

/**
 * What the server sent is not a JSON-RPC message: not JSON (SyntaxError from JSON.parse) or not
 * the shape of one (the SDK's schema check, a ZodError). Both transports report these to onerror.
 */
function isUnreadableMessage(error: unknown): error is Error {
  return error instanceof SyntaxError || (error instanceof Error && error.name === 'ZodError');
}

/** A reply that is not JSON-RPC, seen while connecting. */
class NotJsonRpcError extends Error {
  constructor(cause: Error) {
    super(
      `the server sent something that is not a JSON-RPC message (${cause.name === 'ZodError' ? 'JSON, but not a request, response or notification' : firstLine(cause.message)}). ` +
        'An MCP server must send only JSON-RPC messages (a stdio server on stdout, its logs on stderr; an HTTP server in its replies): check the command or URL',
      { cause },
    );
  }
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0]!.trim();
  return line.length > 160 ? `${line.slice(0, 160)}...` : line;
}

/** What must never appear in an error: env values, header values, URL credentials and query values. */
function secretsOf(config: McpServerConfig): string[] {
  const secrets: string[] = [];
  if (isStdioConfig(config)) secrets.push(...Object.values(config.env ?? {}));
  else {
    secrets.push(...Object.values(config.headers ?? {}).flatMap((v) => [v, ...v.split(/\s+/)]));
    try {
      const url = new URL(config.url);
      secrets.push(url.username, url.password, decodeURIComponent(url.password), ...[...url.searchParams.values()]);
    } catch {
      // an unparseable URL has nothing to hide
    }
  }
  // Short values (a 1-character env var) would blank out ordinary words.
  return secrets.filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
}

function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('***');
  return out;
}

/** A copy of `error` safe to keep as a cause: message and stack scrubbed, code kept. */
function scrubbedError(error: unknown, secrets: readonly string[]): unknown {
  if (!(error instanceof Error) || secrets.length === 0) return error;
  const copy = new Error(scrub(error.message, secrets));
  copy.name = error.name;
  copy.stack = scrub(error.stack ?? '', secrets);
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) (copy as Error & { code?: unknown }).code = code;
  return copy;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
