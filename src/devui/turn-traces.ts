import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { GenAI, TOOL_SOURCE_KIND, TOOL_SOURCE_NAME, TOOL_SOURCE_SERVER } from '../telemetry/gen-ai-attributes.js';
import type { ToolSource } from '../tools/ai-tool.js';
import type { RunSettings } from './devui-api-types.js';

/** One span of a turn, as the page's timeline shows it. */
export interface TraceSpanView {
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** `invoke_agent`, `chat`, `execute_tool` (gen_ai.operation.name). */
  operation?: string;
  /** Milliseconds from the start of the turn's first span. */
  startMs: number;
  durationMs: number;
  status: 'ok' | 'error';
  error?: string;
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  finishReasons?: string[];
  toolName?: string;
  toolCallId?: string;
  toolArguments?: string;
  toolResult?: string;
  /** Where the tool ran when it is not a local function: an MCP tool's server and its name there. */
  toolSource?: ToolSource;
  /**
   * The request and response messages of a model call: only when content capture is on. The
   * request starts with the instructions, as the system message the model is given.
   */
  request?: string;
  response?: string;
  /** Every attribute the span carries, for what the fields above leave out. */
  attributes: Record<string, unknown>;
}

/** The spans of one turn, oldest first. */
export interface TurnTrace {
  runId: string;
  startedAt: string;
  durationMs: number;
  spans: TraceSpanView[];
  /** The run's settings (temperature, model, ...) as the page sent them. */
  settings?: RunSettings;
}

interface RunRecord {
  threadId?: string;
  settings?: RunSettings;
  spans: ReadableSpan[];
  open: number;
  /** Tool arguments and results the run streamed, by call id (spans carry them only with content capture). */
  tools: Map<string, { arguments?: string; result?: string }>;
  settled?: () => void;
}

/**
 * Collects, in this process, the spans Skein's telemetry emits for each Dev UI turn (an
 * OpenTelemetry span processor on the Dev UI's own tracer provider) and keeps them per thread
 * for the session. Spans never leave the process. A run is told apart by an async-local run id
 * set around the run: every span started inside it (and its trace) belongs to that turn.
 */
export class TurnTraces implements SpanProcessor {
  readonly #scope = new AsyncLocalStorage<string>();
  readonly #runOfTrace = new Map<string, string>();
  readonly #runs = new Map<string, RunRecord>();

  /** Runs `fn` (which starts the agent's run) so that the spans it makes are recorded as `runId`'s. */
  inRun<T>(runId: string, settings: RunSettings | undefined, fn: () => T): T {
    this.#runs.set(runId, { spans: [], open: 0, tools: new Map(), ...(settings ? { settings } : {}) });
    return this.#scope.run(runId, fn);
  }

  noteTool(runId: string, callId: string, part: { arguments?: string; result?: string }): void {
    const tools = this.#runs.get(runId)?.tools;
    if (tools) tools.set(callId, { ...tools.get(callId), ...part });
  }

  /** The turn was saved on `threadId`: its trace is listed with that thread. */
  assign(runId: string, threadId: string): void {
    const run = this.#runs.get(runId);
    if (run) run.threadId = threadId;
  }

  /** A run that saved nothing (stopped, failed) keeps no trace. */
  discard(runId: string): void {
    this.#runs.delete(runId);
  }

  /** Resolves when every span the run started has ended (the run span ends just after the stream completes), or after 2 s. */
  async settled(runId: string): Promise<void> {
    const run = this.#runs.get(runId);
    if (!run || run.open === 0) return;
    await Promise.race([new Promise<void>((resolve) => (run.settled = resolve)), new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
  }

  /** The traces of a thread's turns taken in this session, oldest first. */
  forThread(threadId: string): TurnTrace[] {
    return [...this.#runs.entries()].filter(([, run]) => run.threadId === threadId && run.spans.length).map(([runId, run]) => viewTrace(runId, run));
  }

  /** Forgets the traces of a deleted thread. */
  forget(threadId: string): void {
    for (const [runId, run] of this.#runs) if (run.threadId === threadId) this.#runs.delete(runId);
  }

  onStart(span: Span, _parentContext: Context): void {
    const traceId = span.spanContext().traceId;
    const runId = this.#scope.getStore() ?? this.#runOfTrace.get(traceId);
    const run = runId === undefined ? undefined : this.#runs.get(runId);
    if (!run) return;
    this.#runOfTrace.set(traceId, runId!);
    run.open++;
  }

  onEnd(span: ReadableSpan): void {
    const traceId = span.spanContext().traceId;
    const run = this.#runs.get(this.#runOfTrace.get(traceId) ?? '');
    if (!run) return;
    run.spans.push(span);
    if (--run.open === 0) run.settled?.();
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    this.#runs.clear();
    this.#runOfTrace.clear();
    return Promise.resolve();
  }
}

const toMs = ([seconds, nanos]: [number, number]) => seconds * 1000 + nanos / 1e6;

function viewTrace(runId: string, run: RunRecord): TurnTrace {
  const spans = treeOrder(run.spans);
  const start = Math.min(...spans.map((s) => toMs(s.startTime)));
  const end = Math.max(...spans.map((s) => toMs(s.endTime)));
  const trace: TurnTrace = {
    runId,
    startedAt: new Date(start).toISOString(),
    durationMs: round(end - start),
    spans: spans.map((span) => viewSpan(span, start, run.tools)),
  };
  if (run.settings) trace.settings = run.settings;
  return trace;
}

function viewSpan(span: ReadableSpan, start: number, tools: RunRecord['tools']): TraceSpanView {
  const a = span.attributes;
  const text = (key: string) => (typeof a[key] === 'string' ? (a[key] as string) : undefined);
  const number = (key: string) => (typeof a[key] === 'number' ? (a[key] as number) : undefined);
  const view: TraceSpanView = {
    spanId: span.spanContext().spanId,
    name: span.name,
    startMs: round(toMs(span.startTime) - start),
    durationMs: round(toMs(span.duration)),
    status: span.status.code === 2 ? 'error' : 'ok',
    attributes: { ...a },
  };
  const parent = span.parentSpanContext?.spanId;
  const optional: Partial<TraceSpanView> = {
    parentSpanId: parent,
    operation: text(GenAI.OPERATION_NAME),
    model: text(GenAI.RESPONSE_MODEL) ?? text(GenAI.REQUEST_MODEL),
    inputTokens: number(GenAI.USAGE_INPUT_TOKENS),
    outputTokens: number(GenAI.USAGE_OUTPUT_TOKENS),
    finishReasons: Array.isArray(a[GenAI.RESPONSE_FINISH_REASONS]) ? (a[GenAI.RESPONSE_FINISH_REASONS] as string[]) : undefined,
    toolName: text(GenAI.TOOL_NAME),
    toolCallId: text(GenAI.TOOL_CALL_ID),
    request: requestOf(text(GenAI.SYSTEM_INSTRUCTIONS), text(GenAI.INPUT_MESSAGES)),
    response: text(GenAI.OUTPUT_MESSAGES),
    error: view.status === 'error' ? (span.status.message ?? text(GenAI.ERROR_TYPE) ?? 'error') : undefined,
  };
  const sourceKind = text(TOOL_SOURCE_KIND);
  if (sourceKind !== undefined) {
    const server = text(TOOL_SOURCE_SERVER);
    const name = text(TOOL_SOURCE_NAME);
    optional.toolSource = { kind: sourceKind, ...(server !== undefined ? { server } : {}), ...(name !== undefined ? { name } : {}) };
  }
  const tool = optional.toolCallId === undefined ? undefined : tools.get(optional.toolCallId);
  optional.toolArguments = text(GenAI.TOOL_CALL_ARGUMENTS) ?? tool?.arguments;
  optional.toolResult = text(GenAI.TOOL_CALL_RESULT) ?? tool?.result;
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) (view as unknown as Record<string, unknown>)[key] = value;
  return view;
}

/**
 * Everything the span says was sent to the model, as one list of GenAI messages: the GenAI
 * conventions keep the instructions (`gen_ai.system_instructions`, parts) apart from the input
 * messages, so they come first here as the system message the service gives the model.
 */
function requestOf(instructions: string | undefined, input: string | undefined): string | undefined {
  if (instructions === undefined) return input;
  const messages = input === undefined ? [] : parseJson(input);
  // Not a message list (not written by Skein's telemetry): shown as it is.
  if (!Array.isArray(messages)) return input;
  const parts = parseJson(instructions);
  const system = { role: 'system', parts: Array.isArray(parts) ? parts : [{ type: 'text', content: instructions }] };
  return JSON.stringify([system, ...(messages as unknown[])]);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Parents before their children, siblings by start time (a child may start in the same instant as its parent). */
function treeOrder(spans: readonly ReadableSpan[]): ReadableSpan[] {
  const byStart = [...spans].sort((a, b) => toMs(a.startTime) - toMs(b.startTime));
  const ids = new Set(byStart.map((s) => s.spanContext().spanId));
  const ordered: ReadableSpan[] = [];
  const visit = (parent: string | undefined) => {
    for (const span of byStart) {
      const parentId = span.parentSpanContext?.spanId;
      const isChild = parent === undefined ? parentId === undefined || !ids.has(parentId) : parentId === parent;
      if (!isChild) continue;
      ordered.push(span);
      visit(span.spanContext().spanId);
    }
  };
  visit(undefined);
  return ordered;
}

const round = (ms: number) => Math.round(ms * 100) / 100;
