import { isToolCallsReply, type ModelMessage, type ModelReply, type ModelTool } from './emulated-model.js';
import type { SseStream } from './http-replies.js';
import type { IdGenerator } from './id-generator.js';
import { listPage } from './list-page.js';
import { parseInput } from './parse-input.js';
import { registryState } from './registry-state.js';
import { approvalRequestItem, callHostedTool, type HostedMcpServer, hostedMcpTools, knownHostedTools, listHostedTools } from './responses-mcp.js';
import type { RouteContext, RouteRegistry, RouteReply, RouteRequest } from './router.js';
import { InvalidRequestError, isRecord } from './invalid-request-error.js';
import type { StoredItem } from './stored-item.js';

export { InvalidRequestError, isRecord, type StoredItem };

// Re-exported: conversations-routes reads `input`-shaped items through this module.
export { parseInput };

/**
 * What `GET /v1/responses/{id}/input_items` lists for a response made with
 * `previous_response_id` or in a conversation:
 * - `full-context` (the service, and the default): every item the model saw as input, the
 *   earlier turns' inputs AND outputs (each with the id it had when first stored), then the
 *   request's own input. The API reference says a conversation's items "are prepended to
 *   `input_items`", and the list's item union holds output messages and tool calls; llama-stack
 *   (ogx-ai/ogx#2299, fixed by #2300) changed its store to keep the re-hydrated input for the
 *   same reason.
 * - `request-input`: only the items of that request's `input`, as some compatible servers
 *   (llama-stack before that fix) list them.
 */
export type ResponsesInputItemsListing = 'full-context' | 'request-input';

/** Both listings, for suites that run against each (`for (const listing of RESPONSES_INPUT_ITEMS_LISTINGS)`). */
export const RESPONSES_INPUT_ITEMS_LISTINGS: readonly ResponsesInputItemsListing[] = ['full-context', 'request-input'];

export interface ResponsesRoutesOptions {
  /** What input_items lists; `full-context` (the service's way) by default. */
  inputItems?: ResponsesInputItemsListing;
}

/**
 * OpenAI Responses: POST /v1/responses (JSON or SSE), GET/DELETE /v1/responses/{id},
 * GET /v1/responses/{id}/input_items, POST /v1/responses/{id}/cancel. Stateful: stored
 * responses carry the history of `previous_response_id` chains, and a `conversation` carries
 * its items, so the model only knows what the server stored plus the new input.
 */
export function registerResponsesRoutes(registry: RouteRegistry, options: ResponsesRoutesOptions = {}): void {
  const listing = options.inputItems ?? 'full-context';
  const state = responsesStateOf(registry);
  registry.route('POST', '/v1/responses', (request, reply, context) => createResponse(state, request, reply, context));
  registry.route('POST', '/v1/responses/input_tokens', (request, reply, context) => countInputTokens(state, request, reply, context));
  registry.route('GET', '/v1/responses/:id', (request, reply) => {
    const stored = state.responses.get(request.params.id!);
    if (!stored) return responseNotFound(reply, request.params.id!);
    reply.json(200, stored.response);
  });
  registry.route('DELETE', '/v1/responses/:id', (request, reply) => {
    const id = request.params.id!;
    if (!state.responses.delete(id)) return responseNotFound(reply, id);
    reply.json(200, { id, object: 'response', deleted: true });
  });
  registry.route('GET', '/v1/responses/:id/input_items', (request, reply) => {
    const stored = state.responses.get(request.params.id!);
    if (!stored) return responseNotFound(reply, request.params.id!);
    listPage(listing === 'full-context' ? stored.contextItems : stored.inputItems, request, reply);
  });
  registry.route('POST', '/v1/responses/:id/cancel', (request, reply) => {
    if (!state.responses.has(request.params.id!)) return responseNotFound(reply, request.params.id!);
    reply.error(400, 'Only responses created with background=true can be cancelled.', { param: 'response_id' });
  });
}

/** An item as the server keeps it: always with an id and a type. */

export interface StoredResponse {
  response: ResponseObject;
  /** The items of the request's `input`, as stored (with ids). */
  inputItems: StoredItem[];
  /** Every item the model saw as input (the stored history, then `inputItems`), as it was when the response was made. */
  contextItems: StoredItem[];
}

export interface StoredConversation {
  id: string;
  created_at: number;
  metadata: Record<string, unknown>;
  items: StoredItem[];
}

/** What the server stored: responses by id and conversations by id, per emulator. */
export class ResponsesState {
  readonly responses = new Map<string, StoredResponse>();
  readonly conversations = new Map<string, StoredConversation>();
}

/** The Responses/Conversations state of one emulator (shared by both route sets). */
export const responsesStateOf = registryState(() => new ResponsesState());

type ResponseObject = Record<string, unknown> & { id: string; output: StoredItem[] };


interface ResponseRequest {
  model: string;
  instructions: string | undefined;
  input: StoredItem[];
  tools: ModelTool[];
  rawTools: unknown[];
  toolChoice: unknown;
  previousResponseId: string | undefined;
  conversationId: string | undefined;
  store: boolean;
  stream: boolean;
  metadata: Record<string, unknown>;
  temperature: number;
  topP: number;
}

const ARGUMENT_FRAGMENT_LENGTH = 8;

/** A request read against the stored state: what the model sees, and where the turn is kept. */
interface PreparedTurn {
  parsed: ResponseRequest;
  conversation: StoredConversation | undefined;
  messages: ModelMessage[];
  /** Every item in context: the stored history, then the input. */
  items: StoredItem[];
}

/** Reads a create (or input-token count) request, resolves its history and references; throws InvalidRequestError. */
function prepareTurn(state: ResponsesState, body: unknown, context: RouteContext): PreparedTurn {
  const parsed = parseRequest(body, context.ids);
  parsed.input = resolveItemReferences(state, parsed.input);
  const { history, conversation } = historyFor(state, parsed);
  assertToolOutputs([...history, ...parsed.input]);
  const messages: ModelMessage[] = [];
  if (parsed.instructions) messages.push({ role: 'system', text: parsed.instructions });
  for (const item of [...history, ...parsed.input]) {
    if (item.type === 'mcp_call') {
      messages.push(...mcpCallMessages(item));
      continue;
    }
    const message = toModelMessage(item);
    if (message) messages.push(message);
  }
  return { parsed, conversation, messages, items: [...history, ...parsed.input] };
}

/** Runs `read`, answering an InvalidRequestError as the service's error envelope. */
function withInvalidRequest<T>(reply: RouteReply, read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    reply.error(error.status, error.message, { param: error.param, ...(error.code ? { code: error.code } : {}) });
    return undefined;
  }
}

/** POST /v1/responses/input_tokens: the input tokens a create with this body would count. */
function countInputTokens(state: ResponsesState, request: RouteRequest, reply: RouteReply, context: RouteContext): void {
  const turn = withInvalidRequest(reply, () => prepareTurn(state, request.body, context));
  if (!turn) return;
  reply.json(200, { object: 'response.input_tokens', input_tokens: inputTokenCount(turn.messages, context) });
}

function inputTokenCount(messages: readonly ModelMessage[], context: RouteContext): number {
  return messages.reduce((sum, m) => sum + context.model.countTokens(m.text), 0);
}

async function createResponse(state: ResponsesState, request: RouteRequest, reply: RouteReply, context: RouteContext): Promise<void> {
  const turn = withInvalidRequest(reply, () => prepareTurn(state, request.body, context));
  if (!turn) return;
  const { parsed, conversation, messages } = turn;
  const hosted = await withInvalidRequestAsync(reply, () => hostedMcpTurn(parsed, messages, turn.items, context));
  if (!hosted) return;
  // No answer: the response ends asking for approval (its items only).
  const answer = hosted.answer ?? { text: '' };
  const output = [...hosted.items, ...(hosted.answer ? outputItems(answer, context.ids) : [])];
  const inputTokens = inputTokenCount(messages, context);
  const outputTokens = isToolCallsReply(answer)
    ? answer.toolCalls.reduce((sum, c) => sum + context.model.countTokens(`${c.name} ${c.arguments}`), 0)
    : context.model.countTokens(answer.text);

  const createdAt = Math.floor(Date.now() / 1000);
  const response: ResponseObject = {
    id: context.ids.next('resp_'),
    object: 'response',
    created_at: createdAt,
    completed_at: createdAt,
    status: 'completed',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: parsed.instructions ?? null,
    max_output_tokens: null,
    metadata: parsed.metadata,
    model: parsed.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: parsed.previousResponseId ?? null,
    prompt_cache_key: null,
    reasoning: { effort: null, summary: null },
    safety_identifier: null,
    service_tier: 'default',
    conversation: conversation ? { id: conversation.id } : null,
    store: parsed.store,
    temperature: parsed.temperature,
    text: { format: { type: 'text' } },
    tool_choice: parsed.toolChoice ?? 'auto',
    tools: parsed.rawTools,
    top_p: parsed.topP,
    truncation: 'disabled',
    usage: {
      input_tokens: inputTokens,
      // Nothing is cached by the emulator; both counts are required by the API (code sums them).
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    },
  };
  // Stored when created, as the real service does: a client that loses the reply (a cut
  // stream) still leaves the response (and the conversation items) on the server.
  if (parsed.store) state.responses.set(response.id, { response, inputItems: parsed.input, contextItems: turn.items });
  if (conversation) conversation.items.push(...parsed.input, ...output);

  if (parsed.stream) {
    await streamResponse(reply.sse(), response);
    return;
  }
  reply.json(200, response);
}

/** Like withInvalidRequest, for async reads. */
async function withInvalidRequestAsync<T>(reply: RouteReply, read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    return withInvalidRequest(reply, () => {
      throw error;
    });
  }
}

/**
 * The model's turn with the request's hosted MCP servers: their tools are listed (an
 * `mcp_list_tools` item per server) and offered to the model; calls of those tools are made
 * here, on the server (an `mcp_call` item each), and the model answers with their results.
 */
async function hostedMcpTurn(
  parsed: ResponseRequest,
  messages: ModelMessage[],
  items: readonly StoredItem[],
  context: RouteContext,
): Promise<{ answer?: ModelReply; items: StoredItem[] }> {
  const servers: HostedMcpServer[] = [];
  const output: StoredItem[] = [];
  for (const tool of hostedMcpTools(parsed.toolChoice === 'none' ? [] : parsed.rawTools)) {
    // As the service does: a listing of this server already in context (an earlier response's,
    // or one a store: false client sent back) is used; the server is listed only when there is none.
    const known = items.findLast((i) => i.type === 'mcp_list_tools' && i.server_label === tool.serverLabel && (i.error === null || i.error === undefined));
    if (known) {
      servers.push(knownHostedTools(tool, known));
      continue;
    }
    const listed = await listHostedTools(tool, context.ids);
    servers.push(listed.server);
    output.push(listed.item);
  }
  const tools = [...parsed.tools, ...servers.flatMap((s) => s.tools)];
  const serverOf = (name: string, label?: unknown) => servers.find((s) => (label === undefined || s.tool.serverLabel === label) && s.tools.some((t) => t.name === name));

  // The user's answers in this input: approved calls run now, and the model answers from them.
  const answered = await answerApprovals(parsed.input, items, serverOf, context);
  output.push(...answered.items);
  if (answered.messages.length) return { answer: context.model.reply([...messages, ...answered.messages], tools), items: output };

  const answer = context.model.reply(messages, tools);
  if (!isToolCallsReply(answer)) return { answer, items: output };
  const hostedCalls = answer.toolCalls.filter((call) => serverOf(call.name));
  if (hostedCalls.length === 0) return { answer, items: output };
  const callMessages: ModelMessage[] = [];
  let asked = false;
  for (const call of hostedCalls) {
    const server = serverOf(call.name)!;
    if (server.tool.needsApproval(call.name)) {
      output.push(approvalRequestItem(server.tool, call.name, call.arguments, context.ids));
      asked = true;
      continue;
    }
    const item = await callHostedTool(server.tool, call.name, call.arguments, context.ids);
    output.push(item);
    callMessages.push(...mcpCallMessages(item));
  }
  const functionCalls = answer.toolCalls.filter((call) => !serverOf(call.name));
  // Function calls go to the client; with none, the model answers from the servers' results.
  if (functionCalls.length) return { answer: { toolCalls: functionCalls }, items: output };
  // A request for approval ends the response: the model goes on once the user answered.
  if (asked) return { items: output };
  return { answer: context.model.reply([...messages, ...callMessages], tools), items: output };
}

/**
 * The `mcp_approval_response` items of this request (after its last user message: earlier ones
 * were answered by earlier responses). Each names a request in context; approved ones are called.
 */
async function answerApprovals(
  input: readonly StoredItem[],
  items: readonly StoredItem[],
  serverOf: (name: string, label?: unknown) => HostedMcpServer | undefined,
  context: RouteContext,
): Promise<{ items: StoredItem[]; messages: ModelMessage[] }> {
  const lastUser = input.findLastIndex((i) => i.type === 'message' && i.role === 'user');
  const answers = input.slice(lastUser + 1).filter((i) => i.type === 'mcp_approval_response');
  const out: StoredItem[] = [];
  const messages: ModelMessage[] = [];
  for (const answer of answers) {
    const request = items.find((i) => i.type === 'mcp_approval_request' && i.id === answer.approval_request_id);
    if (!request) {
      throw new InvalidRequestError(`No mcp_approval_request with id '${String(answer.approval_request_id)}' in context.`, 'input');
    }
    const server = serverOf(String(request.name), request.server_label);
    if (!server) throw new InvalidRequestError(`MCP server '${String(request.server_label)}' is not among this request's tools.`, 'tools');
    if (answer.approve === true) {
      const item = await callHostedTool(server.tool, String(request.name), String(request.arguments), context.ids, request.id);
      out.push(item);
      messages.push(...mcpCallMessages(item));
    } else {
      const id = String(request.id);
      messages.push(
        { role: 'assistant', text: '', toolCalls: [{ id, name: String(request.name), arguments: String(request.arguments) }] },
        { role: 'tool', text: `Error: the user rejected this call${answer.reason ? `: ${String(answer.reason)}` : '.'}`, toolCallId: id },
      );
    }
  }
  return { items: out, messages };
}

/** An `mcp_call` item as the model sees it: its call and its result. */
function mcpCallMessages(item: StoredItem): ModelMessage[] {
  const id = String(item.id);
  const result = item.error !== null && item.error !== undefined ? `Error: ${String(item.error)}` : String(item.output ?? '');
  return [
    { role: 'assistant', text: '', toolCalls: [{ id, name: String(item.name), arguments: String(item.arguments) }] },
    { role: 'tool', text: result, toolCallId: id },
  ];
}

/** The items the server holds before this request's input, and the conversation it appends to. */
function historyFor(state: ResponsesState, parsed: ResponseRequest): { history: StoredItem[]; conversation?: StoredConversation } {
  if (parsed.previousResponseId !== undefined && parsed.conversationId !== undefined) {
    throw new InvalidRequestError(
      'Mutually exclusive parameters: Ensure you are only providing one of: \'previous_response_id\' or \'conversation\'.',
      'conversation',
    );
  }
  if (parsed.conversationId !== undefined) {
    const conversation = state.conversations.get(parsed.conversationId);
    if (!conversation) {
      throw new InvalidRequestError(`Conversation with id '${parsed.conversationId}' not found.`, 'conversation', 404, 'not_found');
    }
    return { history: [...conversation.items], conversation };
  }
  if (parsed.previousResponseId === undefined) return { history: [] };
  const chain: StoredResponse[] = [];
  for (let id: string | null = parsed.previousResponseId; id; ) {
    const stored = state.responses.get(id);
    if (!stored) {
      // Real service: a missing link anywhere (deleted, or never stored) is this 400.
      throw new InvalidRequestError(`Previous response with id '${id}' not found.`, 'previous_response_id', 400, 'previous_response_not_found');
    }
    chain.unshift(stored);
    id = stored.response.previous_response_id as string | null;
  }
  return { history: chain.flatMap((r) => [...r.inputItems, ...r.response.output]) };
}

/** Like the real service: every function call in the context needs its output first. */
function assertToolOutputs(items: readonly StoredItem[]): void {
  const answered = new Set(items.filter((i) => i.type === 'function_call_output').map((i) => i.call_id));
  const pending = items.find((i) => i.type === 'function_call' && !answered.has(i.call_id));
  if (pending) throw new InvalidRequestError(`No tool output found for function call ${String(pending.call_id)}.`, 'input');
}

function outputItems(answer: ModelReply, ids: IdGenerator): StoredItem[] {
  if (isToolCallsReply(answer)) {
    return answer.toolCalls.map((call) => ({
      id: ids.next('fc_'),
      type: 'function_call',
      status: 'completed',
      call_id: ids.next('call_'),
      name: call.name,
      arguments: call.arguments,
    }));
  }
  return [
    {
      id: ids.next('msg_'),
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: answer.text, annotations: [], logprobs: [] }],
    },
  ];
}

/** The event order the SDK's stream helpers expect (see PROTOCOLS.md). */
async function streamResponse(stream: SseStream, response: ResponseObject): Promise<void> {
  let sequence = 0;
  const send = (type: string, payload: Record<string, unknown>) => stream.send({ type, sequence_number: sequence++, ...payload }, type);
  // A snapshot before the end: no output, no completion time, no usage yet (the spec types usage
  // as an object, so it is left out rather than null).
  const { usage: _usage, ...rest } = response;
  const inProgress = { ...rest, status: 'in_progress', completed_at: null, output: [] };
  if (!(await send('response.created', { response: inProgress }))) return;
  if (!(await send('response.in_progress', { response: inProgress }))) return;

  for (const [index, item] of response.output.entries()) {
    const base = { output_index: index, item_id: item.id };
    if (item.type === 'function_call') {
      const args = String(item.arguments);
      if (!(await send('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } }))) return;
      for (let i = 0; i < args.length; i += ARGUMENT_FRAGMENT_LENGTH) {
        if (!(await send('response.function_call_arguments.delta', { ...base, delta: args.slice(i, i + ARGUMENT_FRAGMENT_LENGTH) }))) return;
      }
      if (!(await send('response.function_call_arguments.done', { ...base, name: item.name, arguments: args }))) return;
    } else if (item.type === 'mcp_approval_request') {
      if (!(await send('response.output_item.added', { output_index: index, item }))) return;
    } else if (item.type === 'mcp_list_tools') {
      if (!(await send('response.output_item.added', { output_index: index, item: { ...item, tools: [] } }))) return;
      if (!(await send('response.mcp_list_tools.in_progress', base))) return;
      if (!(await send(item.error == null ? 'response.mcp_list_tools.completed' : 'response.mcp_list_tools.failed', base))) return;
    } else if (item.type === 'mcp_call') {
      // The call starts with no arguments and no outcome; the arguments stream in, then the service calls the server.
      const args = String(item.arguments);
      const started = { ...item, arguments: '', output: null, error: null, status: 'in_progress' };
      if (!(await send('response.output_item.added', { output_index: index, item: started }))) return;
      if (!(await send('response.mcp_call.in_progress', base))) return;
      for (let i = 0; i < args.length; i += ARGUMENT_FRAGMENT_LENGTH) {
        if (!(await send('response.mcp_call_arguments.delta', { ...base, delta: args.slice(i, i + ARGUMENT_FRAGMENT_LENGTH) }))) return;
      }
      if (!(await send('response.mcp_call_arguments.done', { ...base, arguments: args }))) return;
      if (!(await send(item.error == null ? 'response.mcp_call.completed' : 'response.mcp_call.failed', base))) return;
    } else {
      const part = (item.content as { text: string }[])[0]!;
      const empty = { type: 'output_text', text: '', annotations: [], logprobs: [] };
      if (!(await send('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } }))) return;
      if (!(await send('response.content_part.added', { ...base, content_index: 0, part: empty }))) return;
      for (const word of splitWords(part.text)) {
        if (!(await send('response.output_text.delta', { ...base, content_index: 0, delta: word, logprobs: [] }))) return;
      }
      if (!(await send('response.output_text.done', { ...base, content_index: 0, text: part.text, logprobs: [] }))) return;
      if (!(await send('response.content_part.done', { ...base, content_index: 0, part }))) return;
    }
    if (!(await send('response.output_item.done', { output_index: index, item }))) return;
  }
  if (!(await send('response.completed', { response }))) return;
  await stream.end();
}

function splitWords(text: string): string[] {
  return text.split(/(?<=\s)(?=\S)/).filter((word) => word.length > 0);
}

function parseRequest(body: unknown, ids: IdGenerator): ResponseRequest {
  if (!isRecord(body)) throw new InvalidRequestError('The request body must be a JSON object.', 'body');
  if (typeof body.model !== 'string' || body.model.length === 0) {
    throw new InvalidRequestError('`model` is required and must be a string.', 'model');
  }
  if (body.input === undefined || body.input === null) throw new InvalidRequestError('`input` is required.', 'input');
  const conversation = body.conversation;
  const conversationId =
    typeof conversation === 'string' ? conversation : isRecord(conversation) && typeof conversation.id === 'string' ? conversation.id : undefined;
  if (conversation !== undefined && conversation !== null && conversationId === undefined) {
    throw new InvalidRequestError('`conversation` must be a conversation id or {id}.', 'conversation');
  }
  const rawTools = Array.isArray(body.tools) ? body.tools : [];
  if (body.tools !== undefined && body.tools !== null && !Array.isArray(body.tools)) throw new InvalidRequestError('`tools` must be an array.', 'tools');
  return {
    model: body.model,
    instructions: typeof body.instructions === 'string' ? body.instructions : undefined,
    input: parseInput(body.input, ids),
    tools: body.tool_choice === 'none' ? [] : parseTools(rawTools),
    rawTools,
    toolChoice: body.tool_choice,
    previousResponseId: typeof body.previous_response_id === 'string' ? body.previous_response_id : undefined,
    conversationId,
    store: body.store !== false,
    stream: body.stream === true,
    metadata: isRecord(body.metadata) ? body.metadata : {},
    temperature: typeof body.temperature === 'number' ? body.temperature : 1,
    topP: typeof body.top_p === 'number' ? body.top_p : 1,
  };
}

/**
 * Replaces each `item_reference` by the stored item it names (an input or output item of a
 * stored response, or a conversation item), as the service does: clients that keep their own
 * history (the Vercel AI SDK) send earlier output items back by reference.
 */
export function resolveItemReferences(state: ResponsesState, input: StoredItem[]): StoredItem[] {
  if (!input.some((item) => item.type === 'item_reference')) return input;
  return input.map((item) => {
    if (item.type !== 'item_reference') return item;
    const found = findStoredItem(state, item.id);
    if (!found) {
      throw new InvalidRequestError(
        `Item with id '${item.id}' not found. An item_reference must name an item of a stored response (store: true) or of a conversation.`,
        String(item.param),
        404,
        'not_found',
      );
    }
    return found;
  });
}

function findStoredItem(state: ResponsesState, id: string): StoredItem | undefined {
  for (const stored of state.responses.values()) {
    const found = stored.response.output.find((i) => i.id === id) ?? stored.inputItems.find((i) => i.id === id);
    if (found) return found;
  }
  for (const conversation of state.conversations.values()) {
    const found = conversation.items.find((i) => i.id === id);
    if (found) return found;
  }
  return undefined;
}

function toModelMessage(item: StoredItem): ModelMessage | undefined {
  switch (item.type) {
    case 'message': {
      const text = (item.content as unknown[])
        .map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : ''))
        .join('');
      const role = item.role === 'developer' || item.role === 'system' ? 'system' : (item.role as 'user' | 'assistant');
      return { role, text };
    }
    case 'function_call':
      return { role: 'assistant', text: '', toolCalls: [{ id: String(item.call_id), name: String(item.name), arguments: String(item.arguments) }] };
    case 'function_call_output': {
      const output = item.output;
      const text = typeof output === 'string' ? output : JSON.stringify(output);
      return { role: 'tool', text, toolCallId: String(item.call_id) };
    }
    default:
      return undefined;
  }
}

/** The function tools (hosted `mcp` tools are read by hostedMcpTools). */
function parseTools(tools: readonly unknown[]): ModelTool[] {
  return tools.flatMap((tool, index) => {
    if (isRecord(tool) && tool.type === 'mcp') return [];
    if (!isRecord(tool) || tool.type !== 'function' || typeof tool.name !== 'string') {
      throw new InvalidRequestError(`tools[${index}] must be {type:"function", name, description?, parameters?}.`, `tools[${index}]`);
    }
    return [
      {
        name: tool.name,
        ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
        ...(isRecord(tool.parameters) ? { parameters: tool.parameters } : {}),
      },
    ];
  });
}

function responseNotFound(reply: RouteReply, id: string): void {
  reply.error(404, `Response with id '${id}' not found.`, { param: 'response_id' });
}

