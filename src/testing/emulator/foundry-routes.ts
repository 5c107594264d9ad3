import type { ModelMessage, ModelTextReply } from './emulated-model.js';
import { type AgentWire, type Directive, FoundryRouteError, FoundryState, type RunState, type ThreadState, type WireAttachment, type WireContent, type WireMessage, type WireRun, type WireTool } from './foundry-state.js';
import { listPage } from './list-page.js';
import type { RouteContext, RouteHandler, RouteRegistry, RouteReply, RouteRequest } from './router.js';
import {
  ACTIVE_RUN_STATUSES,
  argumentFragments,
  expireRunIfDue,
  isRecord,
  messageText,
  modelTools,
  nowSeconds as now,
  RunSimulator,
  type RunWireStrategy,
  runStep,
  sendAnswerEvents,
  type SendEvent,
  type SettledTurn,
  toolRoundMessages,
} from './run-simulator.js';

/**
 * Foundry (Azure AI) Agents, as `@azure/ai-agents` 1.x speaks it: the Assistants v2 paths under a
 * project endpoint (`/api/projects/<project>`), `?api-version` on every call, HTTP 200 for every
 * success (the SDK throws on a 201), the `{"error":{...}}` envelope, arrays always arrays and
 * Unix-second timestamps. Agents, threads, messages and runs are kept in memory per emulator.
 *
 * Runs are simulated: a new run is `queued`, the first poll moves it to `in_progress`, the next
 * one settles it (`requires_action` with tool calls, or `completed` with the assistant message).
 * A directive in the last user message forces another ending, so tests can reach each status:
 * `[run:failed]`, `[run:expired]`, `[run:cancelled]`, `[run:incomplete]`, and `[run:hold]` (the
 * run stays `in_progress` until it is cancelled). Directives are not shown to the model.
 */
export const FOUNDRY_PROJECT_PREFIX = '/api/projects/:project';
export const FOUNDRY_DEFAULT_PROJECT = 'emulated';

/** The project endpoint of the emulator at `emulatorUrl`, with its scheme set to https for the SDK. */
export function foundryProjectEndpoint(emulatorUrl: string, project = FOUNDRY_DEFAULT_PROJECT): string {
  return `${emulatorUrl.replace(/^http:/, 'https:')}/api/projects/${project}`;
}

const DIRECTIVE = /\[run:(failed|expired|cancelled|incomplete|hold)\]/i;

export function registerFoundryRoutes(registry: RouteRegistry): void {
  const state = new FoundryState();
  const p = (path: string) => `${FOUNDRY_PROJECT_PREFIX}${path}`;
  const route = (method: string, path: string, handler: (request: RouteRequest, reply: RouteReply, context: RouteContext, state: FoundryState) => unknown) =>
    registry.route(method, p(path), guarded(state, handler));

  route('POST', '/assistants', createAgent);
  route('GET', '/assistants', (request, reply, _c, s) => listPage([...s.agents.values()], request, reply));
  route('GET', '/assistants/:agentId', (request, reply, _c, s) => reply.json(200, agentOf(s, request.params.agentId)));
  route('POST', '/assistants/:agentId', updateAgent);
  route('DELETE', '/assistants/:agentId', (request, reply, _c, s) => {
    agentOf(s, request.params.agentId);
    s.agents.delete(request.params.agentId);
    reply.json(200, { id: request.params.agentId, object: 'assistant.deleted', deleted: true });
  });
  // Before /threads/:threadId, which has as many segments.
  route('POST', '/threads/runs', createThreadAndRun);
  route('POST', '/threads', (request, reply, context, s) => reply.json(200, createThread(s, context, record(request.body).messages).wire));
  route('GET', '/threads/:threadId', (request, reply, _c, s) => reply.json(200, threadOf(s, request.params.threadId).wire));
  route('DELETE', '/threads/:threadId', (request, reply, _c, s) => {
    threadOf(s, request.params.threadId);
    s.threads.delete(request.params.threadId);
    reply.json(200, { id: request.params.threadId, object: 'thread.deleted', deleted: true });
  });
  route('POST', '/threads/:threadId/messages', (request, reply, context, s) => {
    const thread = threadOf(s, request.params.threadId);
    reply.json(200, addMessage(thread, context, request.body, 'body'));
  });
  route('GET', '/threads/:threadId/messages', (request, reply, _c, s) => {
    const thread = threadOf(s, request.params.threadId);
    const runId = request.query.run_id;
    listPage(thread.messages.filter((m) => runId === undefined || m.run_id === runId), request, reply);
  });
  route('GET', '/threads/:threadId/messages/:messageId', (request, reply, _c, s) => {
    const message = threadOf(s, request.params.threadId).messages.find((m) => m.id === request.params.messageId);
    if (!message) throw new FoundryRouteError(404, `No message found with id '${request.params.messageId}'.`);
    reply.json(200, message);
  });
  route('POST', '/threads/:threadId/runs', (request, reply, context, s) => {
    const thread = threadOf(s, request.params.threadId);
    return startRun(s, thread, request.body, reply, context);
  });
  route('GET', '/threads/:threadId/runs', (request, reply, _c, s) => {
    listPage(threadOf(s, request.params.threadId).runs.map((r) => r.object), request, reply);
  });
  route('GET', '/threads/:threadId/runs/:runId', (request, reply, context, s) => {
    const { thread, run } = runOf(s, request.params.threadId, request.params.runId);
    runs.poll(thread, run, context);
    reply.json(200, run.object);
  });
  route('POST', '/threads/:threadId/runs/:runId/cancel', (request, reply, _c, s) => {
    const { run } = runOf(s, request.params.threadId, request.params.runId);
    runs.cancel(run);
    reply.json(200, run.object);
  });
  route('POST', '/threads/:threadId/runs/:runId/submit_tool_outputs', submitToolOutputs);
}

function guarded(
  state: FoundryState,
  handler: (request: RouteRequest, reply: RouteReply, context: RouteContext, state: FoundryState) => unknown,
): RouteHandler {
  return async (request, reply, context) => {
    try {
      if (!request.query['api-version']) {
        throw new FoundryRouteError(400, 'Missing required query parameter `api-version` (the SDK sends api-version=v1).', 'api-version', 'missing_api_version');
      }
      await handler(request, reply, context, state);
    } catch (error) {
      if (!(error instanceof FoundryRouteError)) throw error;
      reply.error(error.status, error.message, { param: error.param, code: error.code });
    }
  };
}

// ---------------------------------------------------------------- agents

function createAgent(request: RouteRequest, reply: RouteReply, context: RouteContext, state: FoundryState): void {
  const body = record(request.body);
  if (typeof body.model !== 'string' || body.model === '') throw new FoundryRouteError(400, '`model` is required.', 'model');
  const agent: AgentWire = {
    id: context.ids.next('asst_'),
    object: 'assistant',
    created_at: now(),
    name: optionalString(body.name) ?? null,
    description: optionalString(body.description) ?? null,
    model: body.model,
    instructions: optionalString(body.instructions) ?? null,
    tools: parseTools(body.tools, 'tools'),
    tool_resources: null,
    temperature: typeof body.temperature === 'number' ? body.temperature : 1,
    top_p: typeof body.top_p === 'number' ? body.top_p : 1,
    response_format: body.response_format ?? 'auto',
    metadata: metadataOf(body.metadata),
  };
  state.agents.set(agent.id, agent);
  reply.json(200, agent);
}

function updateAgent(request: RouteRequest, reply: RouteReply, _context: RouteContext, state: FoundryState): void {
  const agent = agentOf(state, request.params.agentId);
  const body = record(request.body);
  if (typeof body.model === 'string') agent.model = body.model;
  if (typeof body.name === 'string') agent.name = body.name;
  if (typeof body.description === 'string') agent.description = body.description;
  if (typeof body.instructions === 'string') agent.instructions = body.instructions;
  if (body.tools !== undefined && body.tools !== null) agent.tools = parseTools(body.tools, 'tools');
  if (typeof body.temperature === 'number') agent.temperature = body.temperature;
  if (typeof body.top_p === 'number') agent.top_p = body.top_p;
  if (body.response_format !== undefined && body.response_format !== null) agent.response_format = body.response_format;
  if (body.metadata) agent.metadata = metadataOf(body.metadata);
  reply.json(200, agent);
}

function agentOf(state: FoundryState, id: string): AgentWire {
  const agent = state.agents.get(id);
  if (!agent) throw new FoundryRouteError(404, `No assistant found with id '${id}'.`, 'assistant_id', 'not_found');
  return agent;
}

// ---------------------------------------------------------------- threads and messages

function createThread(state: FoundryState, context: RouteContext, messages: unknown): ThreadState {
  const thread: ThreadState = {
    wire: { id: context.ids.next('thread_'), object: 'thread', created_at: now(), metadata: {}, tool_resources: null },
    messages: [],
    runs: [],
  };
  if (messages !== undefined && messages !== null) {
    if (!Array.isArray(messages)) throw new FoundryRouteError(400, '`messages` must be an array.', 'messages');
    messages.forEach((m, i) => addMessage(thread, context, m, `messages[${i}]`));
  }
  state.threads.set(thread.wire.id, thread);
  return thread;
}

function threadOf(state: FoundryState, id: string): ThreadState {
  const thread = state.threads.get(id);
  if (!thread) throw new FoundryRouteError(404, `No thread found with id '${id}'.`, 'thread_id', 'not_found');
  for (const run of thread.runs) expireRunIfDue(run.object, run.expiresAtMs);
  return thread;
}

function activeRun(thread: ThreadState): RunState | undefined {
  return thread.runs.find((r) => ACTIVE_RUN_STATUSES.has(r.object.status));
}

function addMessage(thread: ThreadState, context: RouteContext, input: unknown, param: string): WireMessage {
  const active = activeRun(thread);
  if (active) {
    throw new FoundryRouteError(400, `Can't add messages to ${thread.wire.id} while a run ${active.object.id} is active.`, param, 'thread_locked');
  }
  const message = inputMessage(thread, context, input, param);
  thread.messages.push(message);
  return message;
}

/** A message from a request, checked; not yet on the thread. */
function inputMessage(thread: ThreadState, context: RouteContext, input: unknown, param: string): WireMessage {
  const body = record(input, param);
  if (body.role !== 'user' && body.role !== 'assistant') {
    throw new FoundryRouteError(400, `${param}.role must be "user" or "assistant".`, `${param}.role`);
  }
  const message = newMessage(thread, context, body.role, '', null, null);
  message.content = inputContent(body.content, `${param}.content`);
  message.attachments = inputAttachments(body.attachments, `${param}.attachments`);
  message.metadata = metadataOf(body.metadata);
  return message;
}

function newMessage(
  thread: ThreadState,
  context: RouteContext,
  role: 'user' | 'assistant',
  text: string,
  agentId: string | null,
  runId: string | null,
): WireMessage {
  return {
    id: context.ids.next('msg_'),
    object: 'thread.message',
    created_at: now(),
    thread_id: thread.wire.id,
    status: 'completed',
    incomplete_details: null,
    completed_at: now(),
    incomplete_at: null,
    role,
    content: [{ type: 'text', text: { value: text, annotations: [] } }],
    assistant_id: agentId,
    run_id: runId,
    attachments: [],
    metadata: {},
  };
}

/** Content blocks as the service checks them: text, image_url (http(s) or a base64 data URL), image_file. */
function inputContent(content: unknown, param: string): WireContent[] {
  if (typeof content === 'string') return [{ type: 'text', text: { value: content, annotations: [] } }];
  if (!Array.isArray(content)) throw new FoundryRouteError(400, `${param} must be a string or an array of content blocks.`, param);
  return content.map((block, i): WireContent => {
    const where = `${param}[${i}]`;
    if (!isRecord(block)) throw new FoundryRouteError(400, `${where} must be an object.`, where);
    if (block.type === 'text' && typeof block.text === 'string') return { type: 'text', text: { value: block.text, annotations: [] } };
    if (block.type === 'image_url' && isRecord(block.image_url) && typeof block.image_url.url === 'string') {
      const url = block.image_url.url;
      if (!/^https?:\/\//i.test(url) && !/^data:image\/(png|jpeg|gif|webp);base64,/i.test(url)) {
        throw new FoundryRouteError(400, `${where}.image_url.url must be an http(s) URL or a base64 data URL of a png, jpeg, gif or webp image.`, `${where}.image_url.url`, 'invalid_image_url');
      }
      return { type: 'image_url', image_url: { url, detail: optionalString(block.image_url.detail) ?? 'auto' } };
    }
    if (block.type === 'image_file' && isRecord(block.image_file) && typeof block.image_file.file_id === 'string') {
      return { type: 'image_file', image_file: { file_id: block.image_file.file_id, detail: optionalString(block.image_file.detail) ?? 'auto' } };
    }
    throw new FoundryRouteError(400, `${where} must be {type:"text", text}, {type:"image_url", image_url:{url}} or {type:"image_file", image_file:{file_id}}.`, where);
  });
}

function inputAttachments(attachments: unknown, param: string): WireAttachment[] {
  if (attachments === undefined || attachments === null) return [];
  if (!Array.isArray(attachments)) throw new FoundryRouteError(400, `${param} must be an array.`, param);
  return attachments.map((a, i): WireAttachment => {
    const where = `${param}[${i}]`;
    const tools = isRecord(a) && Array.isArray(a.tools) ? a.tools : undefined;
    if (!isRecord(a) || typeof a.file_id !== 'string' || !tools || tools.length === 0 || !tools.every((t) => isRecord(t) && (t.type === 'file_search' || t.type === 'code_interpreter'))) {
      throw new FoundryRouteError(400, `${where} must be {file_id, tools:[{type:"file_search"|"code_interpreter"}, ...]}.`, where);
    }
    return { file_id: a.file_id, tools: tools.map((t) => ({ type: (t as { type: 'file_search' | 'code_interpreter' }).type })) };
  });
}

// ---------------------------------------------------------------- runs

async function createThreadAndRun(request: RouteRequest, reply: RouteReply, context: RouteContext, state: FoundryState): Promise<void> {
  const body = record(request.body);
  const thread = createThread(state, context, isRecord(body.thread) ? body.thread.messages : undefined);
  await startRun(state, thread, body, reply, context);
}

async function startRun(state: FoundryState, thread: ThreadState, input: unknown, reply: RouteReply, context: RouteContext): Promise<void> {
  const body = record(input);
  if (typeof body.assistant_id !== 'string') throw new FoundryRouteError(400, '`assistant_id` is required.', 'assistant_id');
  const agent = agentOf(state, body.assistant_id);
  const active = activeRun(thread);
  if (active) {
    throw new FoundryRouteError(400, `Thread ${thread.wire.id} already has an active run ${active.object.id}.`, 'thread_id', 'thread_locked');
  }
  let additional: WireMessage[] = [];
  if (body.additional_messages !== undefined && body.additional_messages !== null) {
    if (!Array.isArray(body.additional_messages)) throw new FoundryRouteError(400, '`additional_messages` must be an array.', 'additional_messages');
    additional = body.additional_messages.map((m, i) => inputMessage(thread, context, m, `additional_messages[${i}]`));
  }
  const tools = body.tools === undefined || body.tools === null ? agent.tools : parseTools(body.tools, 'tools');
  // Like the service: a rejected run request adds none of its messages.
  thread.messages.push(...additional);
  const instructions = [optionalString(body.instructions) ?? agent.instructions ?? '', optionalString(body.additional_instructions) ?? '']
    .filter((s) => s.length > 0)
    .join('\n');
  const lastUser = [...thread.messages].reverse().find((m) => m.role === 'user');
  const directive = DIRECTIVE.exec(lastUser ? messageText(lastUser) : '')?.[1]?.toLowerCase() as Directive | undefined;
  const expiresAtMs = Date.now() + context.runExpirySeconds * 1000;
  const run: RunState = {
    object: {
      id: context.ids.next('run_'),
      object: 'thread.run',
      thread_id: thread.wire.id,
      assistant_id: agent.id,
      status: 'queued',
      required_action: null,
      last_error: null,
      model: optionalString(body.model) ?? agent.model,
      instructions,
      tools,
      created_at: now(),
      expires_at: Math.floor(expiresAtMs / 1000),
      started_at: null,
      completed_at: null,
      cancelled_at: null,
      failed_at: null,
      incomplete_details: null,
      usage: null,
      temperature: typeof body.temperature === 'number' ? body.temperature : agent.temperature,
      top_p: typeof body.top_p === 'number' ? body.top_p : agent.top_p,
      max_prompt_tokens: null,
      max_completion_tokens: typeof body.max_completion_tokens === 'number' ? body.max_completion_tokens : null,
      truncation_strategy: { type: 'auto', last_messages: null },
      tool_choice: body.tool_choice ?? 'auto',
      response_format: body.response_format ?? 'auto',
      metadata: metadataOf(body.metadata),
      tool_resources: null,
      parallel_tool_calls: body.parallel_tool_calls !== false,
    },
    directive,
    pollsLeft: 0,
    stuck: directive === 'hold',
    offerTools: body.tool_choice !== 'none',
    rounds: [],
    inputCount: thread.messages.length,
    expiresAtMs,
  };
  thread.runs.push(run);
  if (body.stream === true) {
    await runs.stream(thread, run, reply, context, { created: true });
    return;
  }
  reply.json(200, run.object);
}

function runOf(state: FoundryState, threadId: string, runId: string): { thread: ThreadState; run: RunState } {
  const thread = threadOf(state, threadId);
  const run = thread.runs.find((r) => r.object.id === runId);
  if (!run) throw new FoundryRouteError(404, `No run found with id '${runId}'.`, 'run_id', 'not_found');
  return { thread, run };
}

/**
 * The Foundry wire of the run simulator: `[run:…]` directives (hidden from the model; all but
 * `incomplete` apply to the first turn only), tool rounds kept on the run, usage counted from the
 * model's tokens, steps only as stream events, tool call arguments streamed in fragments.
 */
const foundryRunWire: RunWireStrategy<ThreadState, RunState, WireMessage> = {
  cancelWaitingAtOnce: false,
  scriptedEnding(run) {
    const directive = run.rounds.length === 0 ? run.directive : undefined;
    return directive === 'failed' || directive === 'expired' || directive === 'cancelled' ? directive : undefined;
  },
  modelInput(thread, run) {
    return { messages: modelInput(thread, run), tools: run.offerTools ? modelTools(run.object.tools) : [] };
  },
  toolCallsAsked(_thread, run, calls, input, context) {
    run.rounds.push({ calls, outputs: new Map() });
    const count = (text: string) => context.model.countTokens(text);
    run.object.usage = addUsage(run.object.usage, usageOf(input, calls.reduce((s, c) => s + count(`${c.function.name} ${c.function.arguments}`), 0), context));
  },
  answered(thread, run, answer: ModelTextReply, input, context) {
    const wire = run.object;
    wire.usage = addUsage(wire.usage, usageOf(input, context.model.countTokens(answer.text), context));
    if (run.directive === 'incomplete') {
      const words = answer.text.split(' ');
      const partial = words.slice(0, Math.max(1, Math.floor(words.length / 2))).join(' ');
      const message = newMessage(thread, context, 'assistant', partial, wire.assistant_id, wire.id);
      message.status = 'incomplete';
      message.incomplete_details = { reason: 'max_tokens' };
      message.completed_at = null;
      message.incomplete_at = now();
      thread.messages.push(message);
      return { message, status: 'incomplete' };
    }
    const message = newMessage(thread, context, 'assistant', answer.text, wire.assistant_id, wire.id);
    thread.messages.push(message);
    return { message, status: 'completed' };
  },
  failureMessage(run) {
    return `The emulated run ${run.object.id} failed as asked by [run:failed].`;
  },
  cannotCancel(run, status) {
    return new FoundryRouteError(400, `Cannot cancel run ${run.object.id} with status '${status}'.`, 'run_id', 'invalid_run_status');
  },
  streamTurn,
};

const runs = new RunSimulator(foundryRunWire);

async function submitToolOutputs(request: RouteRequest, reply: RouteReply, context: RouteContext, state: FoundryState): Promise<void> {
  const { thread, run } = runOf(state, request.params.threadId, request.params.runId);
  if (run.object.status !== 'requires_action') {
    throw new FoundryRouteError(400, `Run ${run.object.id} is '${run.object.status}', not 'requires_action'; it takes no tool outputs.`, 'run_id', 'invalid_run_status');
  }
  const body = record(request.body);
  const outputs = Array.isArray(body.tool_outputs) ? body.tool_outputs : [];
  const round = run.rounds[run.rounds.length - 1]!;
  const expected = new Set(round.calls.map((c) => c.id));
  outputs.forEach((output, i) => {
    const o = record(output, `tool_outputs[${i}]`);
    if (typeof o.tool_call_id !== 'string' || !expected.has(o.tool_call_id)) {
      throw new FoundryRouteError(400, `tool_outputs[${i}].tool_call_id ${JSON.stringify(o.tool_call_id)} is not a pending tool call of run ${run.object.id}.`, `tool_outputs[${i}].tool_call_id`);
    }
    round.outputs.set(o.tool_call_id, typeof o.output === 'string' ? o.output : JSON.stringify(o.output ?? ''));
  });
  const missing = [...expected].filter((id) => !round.outputs.has(id));
  if (missing.length > 0) {
    round.outputs.clear();
    throw new FoundryRouteError(400, `Expected tool outputs for call_ids ${JSON.stringify([...expected])}, got none for ${JSON.stringify(missing)}.`, 'tool_outputs');
  }
  runs.resume(run);
  if (body.stream === true) {
    await runs.stream(thread, run, reply, context, { created: false });
    return;
  }
  reply.json(200, run.object);
}

/** A settled turn's events: the tool calls with their arguments in fragments, or the answer. */
async function streamTurn(_thread: ThreadState, run: RunState, settled: SettledTurn<WireMessage>, send: SendEvent, context: RouteContext): Promise<boolean> {
  const step = (type: 'message_creation' | 'tool_calls', details: Record<string, unknown>, status: string) => runStep(stepId, run.object, type, { type, ...details }, status);
  const stepId = context.ids.next('step_');
  if (settled.calls) {
    const pending = settled.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: '', output: null } }));
    if (!(await send('thread.run.step.created', step('tool_calls', { tool_calls: pending }, 'in_progress')))) return false;
    for (const [index, call] of settled.calls.entries()) {
      const pieces = argumentFragments(call.function.arguments);
      for (const [i, piece] of pieces.entries()) {
        const toolCall = i === 0
          ? { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: piece, output: null } }
          : { index, type: 'function', function: { arguments: piece } };
        const delta = { id: stepId, object: 'thread.run.step.delta', delta: { step_details: { type: 'tool_calls', tool_calls: [toolCall] } } };
        if (!(await send('thread.run.step.delta', delta))) return false;
      }
    }
    return send('thread.run.requires_action', run.object);
  }
  const message = settled.message;
  if (!message) return send(`thread.run.${run.object.status}`, run.object);
  const creation = { message_creation: { message_id: message.id } };
  return sendAnswerEvents(send, {
    stepCreated: step('message_creation', creation, 'in_progress'),
    stepCompleted: step('message_creation', creation, 'completed'),
    opening: { ...message, status: 'in_progress', content: [], completed_at: null, incomplete_at: null, incomplete_details: null },
    message: { ...message },
    words: splitWords(messageText(message)),
    annotations: [],
    role: 'assistant',
    run: run.object,
  });
}

// ---------------------------------------------------------------- the model's view

function modelInput(thread: ThreadState, run: RunState): ModelMessage[] {
  const input: ModelMessage[] = [];
  if (run.object.instructions) input.push({ role: 'system', text: run.object.instructions });
  const visible = thread.messages.slice(0, run.inputCount);
  for (const m of visible) input.push({ role: m.role, text: messageText(m).replace(DIRECTIVE, '').trim() });
  for (const round of run.rounds) {
    input.push(...toolRoundMessages(round.calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments, output: round.outputs.get(c.id) }))));
  }
  return input;
}

function parseTools(tools: unknown, param: string): WireTool[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw new FoundryRouteError(400, `\`${param}\` must be an array.`, param);
  return tools.map((tool, i) => {
    if (!isRecord(tool) || typeof tool.type !== 'string') throw new FoundryRouteError(400, `${param}[${i}] needs a type.`, `${param}[${i}]`);
    if (tool.type === 'function' && (!isRecord(tool.function) || typeof tool.function.name !== 'string')) {
      throw new FoundryRouteError(400, `${param}[${i}] must be {type:"function", function:{name, description?, parameters?}}.`, `${param}[${i}]`);
    }
    return tool as WireTool;
  });
}

function usageOf(input: readonly ModelMessage[], completion: number, context: RouteContext) {
  const prompt = input.reduce((sum, m) => sum + context.model.countTokens(m.text), 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function addUsage(a: WireRun['usage'], b: NonNullable<WireRun['usage']>): NonNullable<WireRun['usage']> {
  if (!a) return b;
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
}

function splitWords(text: string): string[] {
  return text.split(/(?<=\s)(?=\S)/).filter((word) => word.length > 0);
}

function record(value: unknown, param = 'body'): Record<string, unknown> {
  if (value === undefined) return {};
  if (!isRecord(value)) throw new FoundryRouteError(400, `${param} must be a JSON object.`, param);
  return value;
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function metadataOf(value: unknown): Record<string, string> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
