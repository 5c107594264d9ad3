import { AsyncLocalStorage } from 'node:async_hooks';
import type { Attributes, Context, Span, Tracer, TracerProvider } from '@opentelemetry/api';
import type { AIAgent } from '../agents/ai-agent.js';
import { SpanKind, SpanStatusCode, context, trace } from './opentelemetry-api.js';
import type { AgentRunResponse } from '../agents/agent-run-response.js';
import type {
  AgentMiddleware,
  AgentRunContext,
  AgentRunMiddleware,
  ChatClientMiddleware,
  ChatRequestContext,
  FunctionCallContext,
  FunctionCallMiddleware,
} from '../agents/middleware.js';
import type { ChatClient } from '../clients/chat-client.js';
import type { ChatResponse } from '../clients/chat-response.js';
import type { FunctionResultContent, HostedMcpCallContent, UsageDetails } from '../messages/content.js';
import { GenAI, GenAIOperation, providerName, TOOL_HOSTED, TOOL_SOURCE_KIND, TOOL_SOURCE_NAME, TOOL_SOURCE_SERVER } from './gen-ai-attributes.js';
import { toGenAIMessages } from './gen-ai-messages.js';

/** Telemetry settings; in a container, rebind this token to change what telemetryPlugin was given. */
export const TelemetryOptions = Symbol('TelemetryOptions');
export interface TelemetryOptions {
  /**
   * Record message contents, instructions and tool arguments/results (`gen_ai.input.messages`,
   * `gen_ai.output.messages`, ...). Off by default: contents may hold personal data. Defaults to
   * the environment variable `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.
   */
  captureContent?: boolean;
  /** Where spans go; the global provider (no-op until the app installs an SDK) by default. */
  tracerProvider?: TracerProvider;
  /** Instrumentation scope name. Default `skein`. */
  tracerName?: string;
}

export const TELEMETRY_SCOPE = 'skein';
const SCOPE_VERSION = '0.1.0';

/**
 * The span context of the Skein operation in progress. Kept apart from OpenTelemetry's own
 * context manager because an app that installs only a tracer provider (no async context
 * manager) would otherwise get run, chat and tool spans as unrelated roots.
 */
const current = new AsyncLocalStorage<Context>();

/**
 * Spans after the OpenTelemetry GenAI conventions for each run (`invoke_agent <agent>`), each
 * model call (`chat <model>`) and each tool call (`execute_tool <tool>`): chat and tool spans
 * are children of their run's span. One instance implements all three middleware contracts;
 * register it first so its spans include the time the other middleware take.
 */
export class TelemetryMiddleware implements AgentRunMiddleware, FunctionCallMiddleware, ChatClientMiddleware {
  readonly captureContent: boolean;
  readonly #provider: TracerProvider | undefined;
  readonly #tracerName: string;

  constructor(options: TelemetryOptions = {}) {
    this.captureContent = options.captureContent ?? process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.toLowerCase() === 'true';
    this.#provider = options.tracerProvider;
    this.#tracerName = options.tracerName ?? TELEMETRY_SCOPE;
  }

  /** Resolved per span, so a provider the app registers later (or replaces) is honoured. */
  get #tracer(): Tracer {
    return (this.#provider ?? trace.getTracerProvider()).getTracer(this.#tracerName, SCOPE_VERSION);
  }

  onRun(ctx: AgentRunContext, next: () => Promise<AgentRunResponse>): Promise<AgentRunResponse> {
    const name = ctx.agent.name;
    const provider = clientIdOf(ctx.agent);
    const attributes: Attributes = {
      [GenAI.OPERATION_NAME]: GenAIOperation.INVOKE_AGENT,
      ...providerAttributes(provider),
      [GenAI.AGENT_NAME]: name,
      [GenAI.AGENT_DESCRIPTION]: ctx.agent.description,
      [GenAI.CONVERSATION_ID]: ctx.thread.serviceThreadId,
      [GenAI.REQUEST_MODEL]: ctx.options.chatOptions?.model,
    };
    return this.#inSpan(name ? `${GenAIOperation.INVOKE_AGENT} ${name}` : GenAIOperation.INVOKE_AGENT, SpanKind.INTERNAL, attributes, next, (span, response) => {
      span.setAttributes({
        [GenAI.CONVERSATION_ID]: ctx.thread.serviceThreadId ?? response?.details.conversationId,
        [GenAI.RESPONSE_ID]: response?.responseId,
        ...usageAttributes(response?.usage),
      });
      if (!this.captureContent) return;
      // Read after the run: inner middleware may have changed the input.
      const instructions = (ctx.agent as { instructions?: unknown }).instructions;
      span.setAttributes({
        [GenAI.SYSTEM_INSTRUCTIONS]: typeof instructions === 'string' ? JSON.stringify([{ type: 'text', content: instructions }]) : undefined,
        [GenAI.INPUT_MESSAGES]: JSON.stringify(toGenAIMessages(ctx.messages)),
        [GenAI.OUTPUT_MESSAGES]: response ? JSON.stringify(toGenAIMessages(response.messages)) : undefined,
      });
    });
  }

  onChatRequest(ctx: ChatRequestContext, next: () => Promise<ChatResponse>): Promise<ChatResponse> {
    const { options } = ctx;
    // A model set only on the client (`new OpenAIChatClient({ model })`) is still the one requested.
    const model = options.model ?? clientModelOf(ctx.agent);
    const attributes: Attributes = {
      [GenAI.OPERATION_NAME]: GenAIOperation.CHAT,
      ...providerAttributes(clientIdOf(ctx.agent)),
      [GenAI.REQUEST_MODEL]: model,
      [GenAI.REQUEST_TEMPERATURE]: options.temperature,
      [GenAI.REQUEST_TOP_P]: options.topP,
      [GenAI.REQUEST_MAX_TOKENS]: options.maxOutputTokens,
      [GenAI.REQUEST_SEED]: options.seed,
      [GenAI.REQUEST_STOP_SEQUENCES]: options.stop,
      [GenAI.CONVERSATION_ID]: options.conversationId,
    };
    const spanName = model ? `${GenAIOperation.CHAT} ${model}` : GenAIOperation.CHAT;
    return this.#inSpan(spanName, SpanKind.CLIENT, attributes, next, (span, response) => {
      if (response) {
        // Without a configured model, the reply is the first to name it.
        if (!model && response.modelId) span.updateName(`${GenAIOperation.CHAT} ${response.modelId}`);
        span.setAttributes({
          [GenAI.RESPONSE_ID]: response.responseId,
          [GenAI.RESPONSE_MODEL]: response.modelId,
          [GenAI.RESPONSE_FINISH_REASONS]: response.finishReason ? [response.finishReason] : undefined,
          [GenAI.CONVERSATION_ID]: options.conversationId ?? response.conversationId,
          ...usageAttributes(response.usage),
        });
        this.#hostedToolSpans(span.span, response);
      }
      if (!this.captureContent) return;
      // ctx.messages is read now: what inner middleware (e.g. redaction) actually sent.
      span.setAttributes({
        [GenAI.SYSTEM_INSTRUCTIONS]: ctx.options.instructions ? JSON.stringify([{ type: 'text', content: ctx.options.instructions }]) : undefined,
        [GenAI.INPUT_MESSAGES]: JSON.stringify(toGenAIMessages(ctx.messages)),
        [GenAI.OUTPUT_MESSAGES]: response ? JSON.stringify(toGenAIMessages(response.messages, response.finishReason)) : undefined,
      });
    });
  }

  onFunctionCall(ctx: FunctionCallContext, next: () => Promise<FunctionResultContent>): Promise<FunctionResultContent> {
    const { call, tool } = ctx;
    const attributes: Attributes = {
      [GenAI.OPERATION_NAME]: GenAIOperation.EXECUTE_TOOL,
      [GenAI.TOOL_NAME]: call.name,
      [GenAI.TOOL_CALL_ID]: call.callId,
      [GenAI.TOOL_TYPE]: 'function',
      [GenAI.TOOL_DESCRIPTION]: tool.declaration.description,
      [GenAI.TOOL_CALL_ARGUMENTS]: this.captureContent ? call.arguments : undefined,
      // Not GenAI conventions (they have no field for where a tool lives): Skein's own names.
      [TOOL_SOURCE_KIND]: tool.source?.kind,
      [TOOL_SOURCE_SERVER]: tool.source?.server,
      [TOOL_SOURCE_NAME]: tool.source?.name,
    };
    return this.#inSpan(`${GenAIOperation.EXECUTE_TOOL} ${call.name}`, SpanKind.INTERNAL, attributes, next, (span, result) => {
      if (!result) return;
      if (result.error !== undefined) {
        // A tool failure goes back to the model as a result, not a thrown error; still a failed span.
        span.setStatus({ code: SpanStatusCode.ERROR, message: result.error });
        span.setAttribute(GenAI.ERROR_TYPE, 'tool_error');
      }
      if (this.captureContent) {
        span.setAttribute(GenAI.TOOL_CALL_RESULT, JSON.stringify(result.error !== undefined ? { error: result.error } : (result.result ?? null)));
      }
    });
  }

  /**
   * An `execute_tool` span for each call the service made during this model call (hosted MCP
   * tools), child of the chat span, with the same attributes as a local MCP tool's. The service
   * reports the calls with the reply, not when they ran: the spans mark that moment (no duration).
   */
  #hostedToolSpans(chatSpan: Span, response: ChatResponse): void {
    const calls = response.messages.flatMap((m) => m.contents.filter((c): c is HostedMcpCallContent => c.kind === 'hosted-mcp-call'));
    if (calls.length === 0) return;
    const parent = trace.setSpan(context.active(), chatSpan);
    for (const call of calls) {
      const attributes: Attributes = {
        [GenAI.OPERATION_NAME]: GenAIOperation.EXECUTE_TOOL,
        [GenAI.TOOL_NAME]: call.name,
        [GenAI.TOOL_CALL_ID]: call.callId,
        // The conventions' type for a tool the agent side (here, the service) runs against an external API.
        [GenAI.TOOL_TYPE]: 'extension',
        [GenAI.TOOL_CALL_ARGUMENTS]: this.captureContent ? call.arguments : undefined,
        [GenAI.TOOL_CALL_RESULT]: this.captureContent ? JSON.stringify(call.error !== undefined ? { error: call.error } : (call.result ?? null)) : undefined,
        [TOOL_SOURCE_KIND]: 'mcp',
        [TOOL_SOURCE_SERVER]: call.serverLabel,
        [TOOL_SOURCE_NAME]: call.name,
        [TOOL_HOSTED]: true,
      };
      const span = this.#tracer.startSpan(`${GenAIOperation.EXECUTE_TOOL} ${call.name}`, { kind: SpanKind.INTERNAL, attributes: defined(attributes) }, parent);
      if (call.error !== undefined) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: call.error });
        span.setAttribute(GenAI.ERROR_TYPE, 'tool_error');
      }
      span.end();
    }
  }

  /** Runs `next` in a span that is the parent of the spans started inside it. */
  async #inSpan<R>(name: string, kind: SpanKind, attributes: Attributes, next: () => Promise<R>, finish: (span: AttributeSetter, result?: R) => void): Promise<R> {
    const parent = parentContext();
    const span = this.#tracer.startSpan(name, { kind, attributes: defined(attributes) }, parent);
    // Even a span that is not recorded (no SDK, or sampled out) is made the parent, so that
    // sampling decisions carry down to the chat and tool spans.
    const spanContext = trace.setSpan(parent, span);
    const record = span.isRecording() ? new AttributeSetter(span) : undefined;
    try {
      const result = await current.run(spanContext, () => context.with(spanContext, next));
      if (record) finish(record, result);
      return result;
    } catch (error) {
      if (record) {
        safely(() => finish(record));
        recordError(span, error);
      }
      throw error;
    } finally {
      span.end();
    }
  }
}

/** A span whose `setAttributes` skips undefined values instead of warning about them. */
class AttributeSetter {
  constructor(readonly span: Span) {}
  setAttributes(attributes: Attributes): void {
    this.span.setAttributes(defined(attributes));
  }
  setAttribute(key: string, value: string): void {
    this.span.setAttribute(key, value);
  }
  setStatus(status: { code: SpanStatusCode; message?: string }): void {
    this.span.setStatus(status);
  }
  updateName(name: string): void {
    this.span.updateName(name);
  }
}

/**
 * Telemetry for one agent: `new ChatAgent({ ..., middleware: telemetryMiddleware() })` (also
 * accepted by OpenAIAssistantAgent and A2AAgent, which apply the kinds that fit them).
 * To combine with other middleware, spread its lists first (`[...t.agentRun, mine]`).
 */
export function telemetryMiddleware(options: TelemetryOptions = {}): Required<AgentMiddleware> {
  const middleware = new TelemetryMiddleware(options);
  return { agentRun: [middleware], functionCall: [middleware], chatClient: [middleware] };
}

/** The context the next span should be a child of: OpenTelemetry's when it tracks one, else ours. */
function parentContext(): Context {
  const active = context.active();
  if (trace.getSpan(active)) return active;
  return current.getStore() ?? active;
}

function clientIdOf(agent: AIAgent): string | undefined {
  // Agents without a ChatClient (Assistants, A2A) name their provider themselves.
  const own = (agent as { providerId?: unknown }).providerId;
  if (typeof own === 'string') return own;
  const client = (agent as { chatClient?: Partial<ChatClient> }).chatClient;
  return typeof client?.providerId === 'string' ? client.providerId : undefined;
}

function clientModelOf(agent: AIAgent): string | undefined {
  const client = (agent as { chatClient?: { model?: unknown } }).chatClient;
  return typeof client?.model === 'string' ? client.model : undefined;
}

function providerAttributes(clientId: string | undefined): Attributes {
  if (!clientId) return {};
  const name = providerName(clientId);
  return { [GenAI.PROVIDER_NAME]: name, [GenAI.SYSTEM]: name };
}

function usageAttributes(usage: UsageDetails | undefined): Attributes {
  return { [GenAI.USAGE_INPUT_TOKENS]: usage?.inputTokens, [GenAI.USAGE_OUTPUT_TOKENS]: usage?.outputTokens };
}

function recordError(span: Span, error: unknown): void {
  const type = error instanceof Error ? (error.constructor.name !== 'Error' ? error.constructor.name : error.name) : '_OTHER';
  span.setAttribute(GenAI.ERROR_TYPE, type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  if (error instanceof Error) span.recordException(error);
}

/** OpenTelemetry drops undefined attribute values with a warning; leave them out instead. */
function defined(attributes: Attributes): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}

function safely(action: () => void): void {
  try {
    action();
  } catch {
    // recording must never replace the caller's error
  }
}
