import { attachments, contentParts, modelText } from './assistants-message-content.js';
import { arrayOf, BadRequest, checkMetadata, checkTools, pick, record, vectorStoreIds } from './bad-request.js';
import type { ModelMessage, ModelTextReply, ModelTool } from './emulated-model.js';
import { FilesState, registerFilesRoutes } from './files-routes.js';
import { listPage } from './list-page.js';
import type { RouteContext, RouteHandler, RouteRegistry, RouteReply, RouteRequest } from './router.js';
import { fileSearchAnswer, stepsAsAsked } from './run-file-search.js';
import {
  ACTIVE_RUN_STATUSES,
  argumentFragments,
  expireRunIfDue,
  isRecord,
  type Json,
  messageText,
  modelTools,
  nowSeconds as now,
  RunSimulator,
  type RunToolCall,
  type RunWireStrategy,
  runStep,
  sendAnswerEvents,
  type SendEvent,
  type SettledTurn,
  type SimulatedRun,
  toolRoundMessages,
} from './run-simulator.js';
import { jsonAnswer, readResponseFormat, ResponseFormatError } from './structured-output.js';

/**
 * Stateful Assistants v2: assistants, threads, messages (paged), runs with a status that moves
 * one step per retrieve, requires_action + submit_tool_outputs, steps, cancel and SSE streaming.
 *
 * Runs are steered from the text of the newest user message, so any client (Assistants, Foundry)
 * can ask for a behaviour without an emulator API:
 * - `[emulator:polls=N]` the run reports `in_progress` for N more retrieves before it moves on;
 * - `[emulator:stuck]` the run stays `in_progress` until cancelled (poll timeouts, aborts);
 * - `[emulator:failed]` / `[emulator:expired]` / `[emulator:incomplete]` / `[emulator:cancelled]`
 *   the run ends in that status instead of answering.
 *
 * File search: files and vector stores are served beside (see `registerFilesRoutes`). A run with
 * the `file_search` tool whose thread or assistant has vector stores searches them on its first
 * model turn and answers with a citation (see `fileSearchAnswer`).
 *
 * Content parts: messages take a string or `text`, `image_url` (an http(s) URL; data URLs are
 * refused, as on the service) and `image_file` (an uploaded file) parts, images in user messages
 * only, and `attachments` of uploaded files for `file_search` / `code_interpreter`. The model
 * reads an image as `[image: <url or file name>]` and an attachment as
 * `[attachment: <file name> for <tools>]` after the message's text, so a test can see what arrived.
 *
 * `response_format` (on the assistant or the run, the run's winning) of `json_object` makes the
 * answer `{"answer": "<the model's text>"}`; `json_schema` makes a value of the schema (see
 * `jsonAnswer`). Metadata is checked as on the service: at most 16 pairs, keys up to 64
 * characters, string values up to 512.
 */
export interface AssistantsRoutesOptions {
  /** Path prefix of every route; `/v1` for OpenAI. */
  prefix?: string;
  /** Reject calls without `OpenAI-Beta: assistants=v2` (true for OpenAI, false for Foundry). */
  requireBetaHeader?: boolean;
  /** Value of the `openai-poll-after-ms` header on run replies. */
  pollAfterMs?: number;
  /** Retrieves a new run stays `in_progress` before it moves on (before markers). Default 1. */
  defaultPolls?: number;
}

export interface EmulatedRun extends SimulatedRun {
  object: Json;
  pollsLeft: number;
  stuck: boolean;
  outcome: 'failed' | 'expired' | 'incomplete' | 'cancelled' | undefined;
  /** Tool results submitted during this run, by tool call id. */
  outputs: Map<string, string>;
  steps: Json[];
  /** `expires_at` in milliseconds (the wire field is whole seconds). */
  expiresAtMs: number;
}

interface EmulatedThread {
  object: Json;
  messages: Json[];
  runs: EmulatedRun[];
}

/** The service's memory (with its files and vector stores); exposed so tests can look behind the API. */
export class AssistantsState extends FilesState {
  readonly assistants = new Map<string, Json>();
  readonly threads = new Map<string, EmulatedThread>();
}

/**
 * Registers the Assistants v2 routes under `prefix` and returns the state behind them. The
 * handlers only depend on the prefix and options, so another service speaking the same protocol
 * (Foundry Agents) can mount them again under its own prefix.
 */
export function registerAssistantsRoutes(registry: RouteRegistry, options: AssistantsRoutesOptions = {}): AssistantsState {
  const prefix = options.prefix ?? '/v1';
  const state = new AssistantsState();
  const service = new AssistantsService(state, options);
  const on = (method: string, path: string, handler: (s: AssistantsService, r: RouteRequest, reply: RouteReply, c: RouteContext) => unknown) => {
    const wrapped: RouteHandler = async (request, reply, context) => {
      try {
        service.checkHeader(request);
        await handler(service, request, reply, context);
      } catch (error) {
        if (error instanceof ResponseFormatError) return reply.error(400, error.message, { param: error.param });
        if (!(error instanceof BadRequest)) throw error;
        reply.error(error.status, error.message, error.param ? { param: error.param } : {});
      }
    };
    registry.route(method, `${prefix}${path}`, wrapped);
  };
  on('POST', '/assistants', (s, r, reply, c) => reply.json(200, s.createAssistant(r.body, c)));
  on('GET', '/assistants', (s, r, reply) => listPage(byCreation([...state.assistants.values()]), r, reply));
  on('GET', '/assistants/:id', (s, r, reply) => reply.json(200, s.assistant(r.params.id)));
  on('POST', '/assistants/:id', (s, r, reply) => reply.json(200, s.updateAssistant(r.params.id, r.body)));
  on('DELETE', '/assistants/:id', (s, r, reply) => reply.json(200, s.deleteAssistant(r.params.id)));
  on('POST', '/threads', (s, r, reply, c) => reply.json(200, s.createThread(r.body, c)));
  // Before `/threads/:id`, which would take "runs" for a thread id.
  on('POST', '/threads/runs', (s, r, reply, c) => s.createThreadAndRun(r.body, reply, c));
  on('POST', '/threads/:id', (s, r, reply) => reply.json(200, s.modify(s.thread(r.params.id).object, r.body, ['metadata', 'tool_resources'])));
  on('POST', '/threads/:id/messages/:messageId', (s, r, reply) => reply.json(200, s.modify(s.message(r.params.id, r.params.messageId), r.body, ['metadata'])));
  on('DELETE', '/threads/:id/messages/:messageId', (s, r, reply) => reply.json(200, s.deleteMessage(r.params.id, r.params.messageId)));
  on('POST', '/threads/:id/runs/:runId', (s, r, reply) => reply.json(200, s.modify(s.run(r.params.id, r.params.runId).object, r.body, ['metadata'])));
  on('GET', '/threads/:id/runs/:runId/steps/:stepId', (s, r, reply) => reply.json(200, s.step(r.params.id, r.params.runId, r.params.stepId, r.query)));
  on('GET', '/threads/:id', (s, r, reply) => reply.json(200, s.thread(r.params.id).object));
  on('DELETE', '/threads/:id', (s, r, reply) => reply.json(200, s.deleteThread(r.params.id)));
  on('POST', '/threads/:id/messages', (s, r, reply, c) => reply.json(200, s.addMessage(r.params.id, r.body, c)));
  on('GET', '/threads/:id/messages', (s, r, reply) => listPage(byCreation(s.listMessages(r.params.id, r.query)), r, reply));
  on('GET', '/threads/:id/messages/:messageId', (s, r, reply) => reply.json(200, s.message(r.params.id, r.params.messageId)));
  on('POST', '/threads/:id/runs', (s, r, reply, c) => s.createRun(r.params.id, r.body, reply, c));
  on('GET', '/threads/:id/runs', (s, r, reply) => listPage(byCreation(s.thread(r.params.id).runs.map((x) => x.object)), r, reply));
  on('GET', '/threads/:id/runs/:runId', (s, r, reply, c) => reply.json(200, s.retrieveRun(r.params.id, r.params.runId, c), s.pollHeaders));
  on('POST', '/threads/:id/runs/:runId/cancel', (s, r, reply) => reply.json(200, s.cancelRun(r.params.id, r.params.runId), s.pollHeaders));
  on('POST', '/threads/:id/runs/:runId/submit_tool_outputs', (s, r, reply, c) => s.submitToolOutputs(r.params.id, r.params.runId, r.body, reply, c));
  on('GET', '/threads/:id/runs/:runId/steps', (s, r, reply) => listPage(byCreation(s.steps(r.params.id, r.params.runId, r.query)), r, reply));
  registerFilesRoutes(registry, state, { prefix, pollAfterMs: options.pollAfterMs });
  return state;
}

class AssistantsService {
  readonly pollHeaders: Record<string, string>;
  constructor(
    private readonly state: AssistantsState,
    private readonly options: AssistantsRoutesOptions,
  ) {
    this.pollHeaders = { 'openai-poll-after-ms': String(options.pollAfterMs ?? 5) };
    this.runs = new RunSimulator(new AssistantsRunWire(state));
  }

  private readonly runs: RunSimulator<EmulatedThread, EmulatedRun, Json>;

  checkHeader(request: RouteRequest): void {
    if (this.options.requireBetaHeader === false) return;
    if (!(request.headers['openai-beta'] ?? '').includes('assistants=v2')) {
      throw new BadRequest("You must provide the 'OpenAI-Beta' header to access the Assistants API: 'OpenAI-Beta: assistants=v2'.");
    }
  }

  // ---- assistants
  createAssistant(body: unknown, context: RouteContext): Json {
    const b = record(body, 'body');
    if (typeof b.model !== 'string' || !b.model) throw new BadRequest('`model` is required.', 400, 'model');
    const assistant: Json = {
      id: context.ids.next('asst_'),
      object: 'assistant',
      created_at: now(),
      name: null,
      description: null,
      instructions: null,
      tools: [],
      tool_resources: {},
      metadata: {},
      temperature: 1,
      top_p: 1,
      response_format: 'auto',
      ...pick(b, ['model', 'name', 'description', 'instructions', 'tools', 'tool_resources', 'metadata', 'temperature', 'top_p', 'response_format']),
    };
    checkTools(assistant.tools);
    this.checkToolResources(assistant.tool_resources);
    checkMetadata(assistant.metadata, 'metadata');
    readResponseFormat(assistant.response_format, 'response_format');
    this.state.assistants.set(assistant.id as string, assistant);
    return assistant;
  }

  assistant(id: string): Json {
    const found = this.state.assistants.get(id);
    if (!found) throw new BadRequest(`No assistant found with id '${id}'.`, 404);
    return found;
  }

  updateAssistant(id: string, body: unknown): Json {
    const assistant = this.assistant(id);
    const b = record(body, 'body');
    if (b.tool_resources !== undefined) this.checkToolResources(b.tool_resources);
    if (b.tools !== undefined) checkTools(b.tools);
    if (b.metadata !== undefined) checkMetadata(b.metadata, 'metadata');
    readResponseFormat(b.response_format, 'response_format');
    Object.assign(assistant, pick(b, ['model', 'name', 'description', 'instructions', 'tools', 'tool_resources', 'metadata', 'temperature', 'top_p', 'response_format']));
    return assistant;
  }

  deleteAssistant(id: string): Json {
    this.assistant(id);
    this.state.assistants.delete(id);
    return { id, object: 'assistant.deleted', deleted: true };
  }

  /** Vector stores named in tool resources must exist, as on the service. */
  private checkToolResources(resources: unknown): void {
    if (resources === undefined || resources === null) return;
    if (!isRecord(resources)) throw new BadRequest('`tool_resources` must be an object.', 400, 'tool_resources');
    for (const id of vectorStoreIds(resources)) {
      if (!this.state.vectorStores.has(id)) throw new BadRequest(`No vector store found with id '${id}'.`, 404, 'tool_resources.file_search.vector_store_ids');
    }
  }

  /** A run's steps; file search results carry their text only when asked with `include`. */
  steps(threadId: string, runId: string, query: Record<string, string>): Json[] {
    return stepsAsAsked(this.run(threadId, runId).steps, query);
  }

  /** Updates the named fields of a thread, message or run (the "modify" operations). */
  modify(target: Json, body: unknown, fields: string[]): Json {
    const b = record(body, 'body');
    if (b.metadata !== undefined && b.metadata !== null && !isRecord(b.metadata)) throw new BadRequest('`metadata` must be an object.', 400, 'metadata');
    if (fields.includes('tool_resources') && b.tool_resources !== undefined) this.checkToolResources(b.tool_resources);
    Object.assign(target, pick(b, fields));
    return target;
  }

  /** One step of a run, with file search contents only when asked, as in the list. */
  step(threadId: string, runId: string, stepId: string, query: Record<string, string>): Json {
    const found = this.steps(threadId, runId, query).find((s) => s.id === stepId);
    if (!found) throw new BadRequest(`No run step found with id '${stepId}'.`, 404);
    return found;
  }

  deleteMessage(threadId: string, messageId: string): Json {
    const thread = this.thread(threadId);
    this.message(threadId, messageId);
    thread.messages = thread.messages.filter((m) => m.id !== messageId);
    return { id: messageId, object: 'thread.message.deleted', deleted: true };
  }

  /** POST /threads/runs: a thread from `thread` and a run on it, checked first so bad input creates nothing. */
  async createThreadAndRun(body: unknown, reply: RouteReply, context: RouteContext): Promise<void> {
    const b = record(body, 'body');
    if (typeof b.assistant_id !== 'string') throw new BadRequest('`assistant_id` is required.', 400, 'assistant_id');
    this.assistant(b.assistant_id);
    if (b.tools !== undefined) checkTools(b.tools);
    const thread = this.createThread(b.thread ?? {}, context);
    const { thread: _omitted, ...run } = b;
    await this.createRun(thread.id as string, run, reply, context, thread);
  }

  // ---- threads and messages
  createThread(body: unknown, context: RouteContext): Json {
    const b = body === undefined ? {} : record(body, 'body');
    this.checkToolResources(b.tool_resources);
    checkMetadata(b.metadata, 'metadata');
    const object: Json = { id: context.ids.next('thread_'), object: 'thread', created_at: now(), metadata: b.metadata ?? {}, tool_resources: b.tool_resources ?? {} };
    const thread: EmulatedThread = { object, messages: [], runs: [] };
    this.state.threads.set(object.id as string, thread);
    for (const [i, m] of arrayOf(b.messages, 'messages').entries()) thread.messages.push(this.newMessage(thread, m, `messages[${i}]`, context));
    return object;
  }

  thread(id: string): EmulatedThread {
    const found = this.state.threads.get(id);
    if (!found) throw new BadRequest(`No thread found with id '${id}'.`, 404);
    for (const run of found.runs) expireRunIfDue(run.object, run.expiresAtMs, run.steps);
    return found;
  }

  deleteThread(id: string): Json {
    this.thread(id);
    this.state.threads.delete(id);
    return { id, object: 'thread.deleted', deleted: true };
  }

  addMessage(threadId: string, body: unknown, context: RouteContext): Json {
    const thread = this.thread(threadId);
    const active = thread.runs.find((r) => ACTIVE_RUN_STATUSES.has(r.object.status as string));
    if (active) throw new BadRequest(`Can't add messages to ${threadId} while a run ${active.object.id as string} is active.`);
    const message = this.newMessage(thread, body, 'body', context);
    thread.messages.push(message);
    return message;
  }

  message(threadId: string, messageId: string): Json {
    const found = this.thread(threadId).messages.find((m) => m.id === messageId);
    if (!found) throw new BadRequest(`No message found with id '${messageId}'.`, 404);
    return found;
  }

  listMessages(threadId: string, query: Record<string, string>): Json[] {
    return this.thread(threadId).messages.filter((m) => query.run_id === undefined || m.run_id === query.run_id);
  }

  private newMessage(thread: EmulatedThread, body: unknown, param: string, context: RouteContext): Json {
    const m = record(body, param);
    if (m.role !== 'user' && m.role !== 'assistant') throw new BadRequest(`${param}.role must be "user" or "assistant".`, 400, `${param}.role`);
    checkMetadata(m.metadata, `${param}.metadata`);
    return {
      id: context.ids.next('msg_'),
      object: 'thread.message',
      created_at: now(),
      thread_id: thread.object.id,
      role: m.role,
      status: 'completed',
      content: contentParts(this.state, m.content, m.role, `${param}.content`),
      assistant_id: null,
      run_id: null,
      attachments: attachments(this.state, m.attachments, `${param}.attachments`),
      metadata: isRecord(m.metadata) ? m.metadata : {},
      completed_at: now(),
      incomplete_at: null,
      incomplete_details: null,
    };
  }

  // ---- runs
  async createRun(threadId: string, body: unknown, reply: RouteReply, context: RouteContext, threadCreated?: Json): Promise<void> {
    const thread = this.thread(threadId);
    const b = record(body, 'body');
    if (typeof b.assistant_id !== 'string') throw new BadRequest('`assistant_id` is required.', 400, 'assistant_id');
    const assistant = this.assistant(b.assistant_id);
    const active = thread.runs.find((r) => ACTIVE_RUN_STATUSES.has(r.object.status as string));
    if (active) throw new BadRequest(`Thread ${threadId} already has an active run ${active.object.id as string}.`);
    if (b.tools !== undefined) checkTools(b.tools);
    checkMetadata(b.metadata, 'metadata');
    readResponseFormat(b.response_format, 'response_format');
    const additional = arrayOf(b.additional_messages, 'additional_messages').map((m, i) => this.newMessage(thread, m, `additional_messages[${i}]`, context));
    thread.messages.push(...additional);
    const marker = lastUserText(thread.messages);
    const polls = /\[emulator:polls=(\d+)\]/.exec(marker)?.[1];
    const outcome = /\[emulator:(failed|expired|incomplete|cancelled)\]/.exec(marker)?.[1] as EmulatedRun['outcome'];
    const expiresAtMs = Date.now() + context.runExpirySeconds * 1000;
    const object: Json = {
      id: context.ids.next('run_'),
      object: 'thread.run',
      created_at: now(),
      thread_id: threadId,
      assistant_id: assistant.id,
      status: 'queued',
      required_action: null,
      last_error: null,
      expires_at: Math.floor(expiresAtMs / 1000),
      started_at: null,
      cancelled_at: null,
      failed_at: null,
      completed_at: null,
      incomplete_details: null,
      model: b.model ?? assistant.model,
      instructions: `${(b.instructions as string | undefined) ?? (assistant.instructions as string | null) ?? ''}${b.additional_instructions ? `\n${b.additional_instructions as string}` : ''}`,
      tools: b.tools ?? assistant.tools,
      metadata: b.metadata ?? {},
      usage: null,
      temperature: b.temperature ?? assistant.temperature,
      top_p: b.top_p ?? assistant.top_p,
      max_prompt_tokens: b.max_prompt_tokens ?? null,
      max_completion_tokens: b.max_completion_tokens ?? null,
      truncation_strategy: b.truncation_strategy ?? { type: 'auto', last_messages: null },
      tool_choice: b.tool_choice ?? 'auto',
      parallel_tool_calls: b.parallel_tool_calls ?? true,
      response_format: b.response_format ?? 'auto',
    };
    const run: EmulatedRun = {
      object,
      pollsLeft: polls !== undefined ? Number(polls) : (this.options.defaultPolls ?? 1),
      stuck: marker.includes('[emulator:stuck]'),
      outcome,
      outputs: new Map(),
      steps: [],
      expiresAtMs,
    };
    thread.runs.unshift(run);
    if (b.stream === true) {
      await this.runs.stream(thread, run, reply, context, { created: true, threadCreated });
      return;
    }
    reply.json(200, object, this.pollHeaders);
  }

  run(threadId: string, runId: string): EmulatedRun {
    const found = this.thread(threadId).runs.find((r) => r.object.id === runId);
    if (!found) throw new BadRequest(`No run found with id '${runId}'.`, 404);
    return found;
  }

  /** Each retrieve moves an active run one step: queued -> in_progress (xN) -> its result. */
  retrieveRun(threadId: string, runId: string, context: RouteContext): Json {
    const thread = this.thread(threadId);
    const run = this.run(threadId, runId);
    this.runs.poll(thread, run, context);
    return run.object;
  }

  cancelRun(threadId: string, runId: string): Json {
    const run = this.run(threadId, runId);
    this.runs.cancel(run);
    return run.object;
  }

  async submitToolOutputs(threadId: string, runId: string, body: unknown, reply: RouteReply, context: RouteContext): Promise<void> {
    const thread = this.thread(threadId);
    const run = this.run(threadId, runId);
    if (run.object.status !== 'requires_action') {
      throw new BadRequest(`Runs in status "${run.object.status as string}" do not accept tool outputs.`);
    }
    const b = record(body, 'body');
    const outputs = arrayOf(b.tool_outputs, 'tool_outputs').map((o, i) => record(o, `tool_outputs[${i}]`));
    const required = ((run.object.required_action as Json).submit_tool_outputs as { tool_calls: Json[] }).tool_calls.map((c) => c.id as string);
    const given = outputs.map((o) => o.tool_call_id);
    const missing = required.filter((id) => !given.includes(id));
    if (missing.length) throw new BadRequest(`Expected tool outputs for call_ids ${JSON.stringify(required)}, got ${JSON.stringify(given)}.`, 400, 'tool_outputs');
    for (const o of outputs) {
      if (!required.includes(o.tool_call_id as string)) throw new BadRequest(`Unknown tool_call_id ${JSON.stringify(o.tool_call_id)}.`, 400, 'tool_outputs');
      run.outputs.set(o.tool_call_id as string, typeof o.output === 'string' ? o.output : '');
    }
    const step = run.steps.find((s) => s.type === 'tool_calls' && s.status === 'in_progress');
    if (step) {
      for (const call of (step.step_details as { tool_calls: { id: string; function: Json }[] }).tool_calls) call.function.output = run.outputs.get(call.id) ?? null;
      step.status = 'completed';
      step.completed_at = now();
    }
    this.runs.resume(run);
    if (b.stream === true) {
      await this.runs.stream(thread, run, reply, context, { created: false });
      return;
    }
    reply.json(200, run.object, this.pollHeaders);
  }
}

/** The Assistants v2 wire of the run simulator: `[emulator:…]` markers, stored steps, file search, fixed usage. */
class AssistantsRunWire implements RunWireStrategy<EmulatedThread, EmulatedRun, Json> {
  readonly cancelWaitingAtOnce = true;

  constructor(private readonly state: AssistantsState) {}

  scriptedEnding(run: EmulatedRun): EmulatedRun['outcome'] {
    return run.outcome;
  }

  modelInput(thread: EmulatedThread, run: EmulatedRun): { messages: ModelMessage[]; tools: ModelTool[] } {
    const out: ModelMessage[] = [];
    if (run.object.instructions) out.push({ role: 'system', text: run.object.instructions as string });
    for (const m of thread.messages) {
      if (m.run_id === run.object.id) continue;
      out.push({ role: m.role as 'user' | 'assistant', text: modelText(this.state, m) });
    }
    for (const step of [...run.steps].reverse()) {
      if (step.type !== 'tool_calls' || step.status !== 'completed') continue;
      const calls = (step.step_details as { tool_calls: { id: string; function: { name: string; arguments: string; output: string | null } }[] }).tool_calls;
      out.push(...toolRoundMessages(calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments, output: c.function.output ?? '' }))));
    }
    return { messages: out, tools: modelTools(run.object.tools) };
  }

  toolCallsAsked(_thread: EmulatedThread, run: EmulatedRun, calls: RunToolCall[], _input: readonly ModelMessage[], context: RouteContext): void {
    const step = this.newStep(run, context, 'tool_calls', {
      type: 'tool_calls',
      tool_calls: calls.map((c) => ({ ...c, function: { ...c.function, output: null } })),
    });
    step.status = 'in_progress';
  }

  answered(thread: EmulatedThread, run: EmulatedRun, reply: ModelTextReply, _input: readonly ModelMessage[], context: RouteContext): { message: Json; status: 'completed' } {
    const cited = this.fileSearch(thread, run, context);
    const message: Json = {
      id: context.ids.next('msg_'),
      object: 'thread.message',
      created_at: now(),
      thread_id: thread.object.id,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'text', text: cited ?? { value: this.answerText(run, reply.text, thread), annotations: [] } }],
      assistant_id: run.object.assistant_id,
      run_id: run.object.id,
      attachments: [],
      metadata: {},
      completed_at: now(),
      incomplete_at: null,
      incomplete_details: null,
    };
    thread.messages.push(message);
    const step = this.newStep(run, context, 'message_creation', { type: 'message_creation', message_creation: { message_id: message.id } });
    step.status = 'completed';
    step.completed_at = now();
    run.object.usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    return { message, status: 'completed' };
  }

  failureMessage(): string {
    return 'The emulated run failed as asked ([emulator:failed]).';
  }

  ended(run: EmulatedRun, status: string): void {
    for (const step of run.steps) if (step.status === 'in_progress') step.status = status === 'completed' ? 'completed' : status === 'failed' ? 'failed' : 'cancelled';
  }

  cannotCancel(_run: EmulatedRun, status: string): Error {
    return new BadRequest(`Cannot cancel run with status '${status}'.`);
  }

  async streamTurn(_thread: EmulatedThread, run: EmulatedRun, settled: SettledTurn<Json>, send: SendEvent, _context: RouteContext, created: boolean): Promise<boolean> {
    const status = run.object.status as string;
    if (status === 'requires_action') {
      // The step opens with no calls; each call's id and name, then its arguments, stream as
      // `thread.run.step.delta` (OpenAPI: it "occurs when parts of a run step are being streamed";
      // a function tool call delta carries `function.arguments`). The SDK's AssistantStream
      // appends every delta to the step's snapshot by `index`, so nothing is sent twice.
      const step = run.steps[0]!;
      const opening = { ...step, step_details: { type: 'tool_calls', tool_calls: [] } };
      if (!(await send('thread.run.step.created', opening))) return false;
      if (!(await send('thread.run.step.in_progress', opening))) return false;
      const calls = (step.step_details as { tool_calls: { id: string; function: { name: string; arguments: string } }[] }).tool_calls;
      for (const [index, call] of calls.entries()) {
        const first = { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '', output: null } };
        const pieces = [first, ...argumentFragments(call.function.arguments).filter((piece) => piece !== '').map((piece) => ({ index, type: 'function', function: { arguments: piece } }))];
        for (const toolCall of pieces) {
          if (!(await send('thread.run.step.delta', { id: step.id, object: 'thread.run.step.delta', delta: { step_details: { type: 'tool_calls', tool_calls: [toolCall] } } }))) return false;
        }
      }
      return send('thread.run.requires_action', run.object);
    }
    const result = settled.message;
    if (status !== 'completed' || !result) return send(`thread.run.${status}`, run.object);
    const step = run.steps[0];
    const search = run.steps[1]?.type === 'tool_calls' && run.steps[1].status === 'completed' && created ? run.steps[1] : undefined;
    if (search) {
      if (!(await send('thread.run.step.created', { ...search, status: 'in_progress', completed_at: null }))) return false;
      if (!(await send('thread.run.step.completed', search))) return false;
    }
    const annotations = ((result.content as { text?: { annotations?: Json[] } }[])[0]?.text?.annotations ?? []).map((a, index): Json => ({ index, ...a }));
    return sendAnswerEvents(send, {
      stepCreated: { ...step, status: 'in_progress' },
      stepCompleted: step,
      opening: { ...result, status: 'in_progress', content: [] },
      message: result as Json & { id: unknown; status: unknown },
      words: messageText(result).split(/(?<=\s)(?=\S)/),
      annotations,
      run: run.object,
    });
  }

  /** The model's text, as JSON when the run (or else its assistant) asks for a JSON response format. */
  private answerText(run: EmulatedRun, text: string, thread: EmulatedThread): string {
    const runFormat = run.object.response_format;
    const source = runFormat === undefined || runFormat === null || runFormat === 'auto' ? this.state.assistants.get(run.object.assistant_id as string)?.response_format : runFormat;
    const format = readResponseFormat(source, 'response_format');
    return format ? jsonAnswer(format, text, lastUserText(thread.messages)) : text;
  }

  /** On the run's first model turn, with file_search and vector stores attached: the cited answer (see `fileSearchAnswer`). */
  private fileSearch(thread: EmulatedThread, run: EmulatedRun, context: RouteContext): Json | undefined {
    const tools = Array.isArray(run.object.tools) ? (run.object.tools as unknown[]) : [];
    if (!tools.some((t) => isRecord(t) && t.type === 'file_search')) return undefined;
    if (run.steps.some((s) => s.type === 'tool_calls')) return undefined;
    const assistant = this.state.assistants.get(run.object.assistant_id as string);
    const storeIds = [...vectorStoreIds(thread.object.tool_resources), ...vectorStoreIds(assistant?.tool_resources)];
    return fileSearchAnswer(this.state, storeIds, lastUserText(thread.messages), context, (type, details) => this.newStep(run, context, type, details));
  }

  private newStep(run: EmulatedRun, context: RouteContext, type: string, details: Json): Json {
    const step = runStep(context.ids.next('step_'), run.object, type, details, 'in_progress');
    run.steps.unshift(step); // newest first, like every list here
    return step;
  }
}

/** Oldest first (runs and steps are kept newest first), as `listPage` takes them: by the ids' creation counter. */
function byCreation(items: Json[]): Json[] {
  return [...items].sort((a, b) => idNumber(a) - idNumber(b));
}

function idNumber(item: Json): number {
  return Number(/(\d+)$/.exec(String(item.id))?.[1] ?? 0);
}

function lastUserText(messages: Json[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user') return messageText(messages[i]);
  return '';
}
