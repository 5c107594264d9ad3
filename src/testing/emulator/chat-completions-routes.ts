import { isToolCallsReply, type ModelMessage, type ModelReply, type ModelTool, type ModelToolCall } from './emulated-model.js';
import type { SseStream } from './http-replies.js';
import { InvalidRequestError } from './responses-routes.js';
import type { RouteContext, RouteRegistry, RouteReply, RouteRequest } from './router.js';
import { parseMetadata, registerStoredChatCompletionsRoutes, storedChatCompletionsOf, type StoredChatCompletion } from './stored-chat-completions-routes.js';

/** OpenAI Chat Completions: POST /v1/chat/completions, JSON or SSE. */
export function registerChatCompletionsRoutes(registry: RouteRegistry): void {
  const stored = storedChatCompletionsOf(registry);
  const create = (request: RouteRequest, reply: RouteReply, context: RouteContext) => createChatCompletion(request, reply, context, stored);
  registry.route('POST', '/v1/chat/completions', create);
  // Azure OpenAI: the same body under a deployment path, with ?api-version=.
  registry.route('POST', '/openai/deployments/:deployment/chat/completions', create);
  registerStoredChatCompletionsRoutes(registry);
}

/** What every completion reports about how it was served (the SDKs and loggers read them). */
const SERVED_BY = { service_tier: 'default', system_fingerprint: 'fp_emulator' } as const;

interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

interface ChatCompletionRequest {
  model: string;
  messages: ModelMessage[];
  tools: ModelTool[];
  stream: boolean;
  includeUsage: boolean;
  store: boolean;
  metadata: Record<string, string>;
  /** The request's messages as sent, for the stored completion's message list. */
  rawMessages: Record<string, unknown>[];
}

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
  completion_tokens_details: { reasoning_tokens: number; audio_tokens: number; accepted_prediction_tokens: number; rejected_prediction_tokens: number };
}

const ARGUMENT_FRAGMENT_LENGTH = 8;

async function createChatCompletion(request: RouteRequest, reply: RouteReply, context: RouteContext, stored: Map<string, StoredChatCompletion>): Promise<void> {
  let parsed: ChatCompletionRequest;
  try {
    parsed = parseRequest(request.body);
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    reply.error(400, error.message, { param: error.param });
    return;
  }
  const answer = context.model.reply(parsed.messages, parsed.tools);
  const id = context.ids.next('chatcmpl-');
  const toolCalls = isToolCallsReply(answer)
    ? answer.toolCalls.map(
        (call): ChatToolCall => ({
          id: context.ids.next('call_'),
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        }),
      )
    : undefined;
  const usage = computeUsage(parsed.messages, answer, context);
  const completion = { id, model: parsed.model, created: Math.floor(Date.now() / 1000), ...SERVED_BY };
  const whole = {
    ...completion,
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        finish_reason: toolCalls ? 'tool_calls' : 'stop',
        logprobs: null,
        message: {
          role: 'assistant',
          content: isToolCallsReply(answer) ? null : answer.text,
          refusal: null,
          ...(toolCalls ? { tool_calls: toolCalls } : {}),
        },
      },
    ],
    usage,
  };
  // Kept when asked (`store: true`), streamed or not, for the stored-completions routes.
  if (parsed.store) stored.set(id, { completion: { ...whole, metadata: parsed.metadata }, messages: parsed.rawMessages });

  if (parsed.stream) {
    await streamCompletion(reply.sse(), completion, answer, toolCalls, parsed.includeUsage ? usage : undefined);
    return;
  }
  reply.json(200, whole);
}

/** The chunk order the SDK's stream helpers expect (see PROTOCOLS.md). */
async function streamCompletion(
  stream: SseStream,
  completion: { id: string; model: string; created: number } & typeof SERVED_BY,
  answer: ModelReply,
  toolCalls: ChatToolCall[] | undefined,
  usage: Usage | undefined,
): Promise<void> {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    ...completion,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(usage ? { usage: null } : {}),
  });

  const deltas: Record<string, unknown>[] = [{ role: 'assistant', content: '' }];
  if (toolCalls) {
    toolCalls.forEach((call, index) => {
      deltas.push({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }],
      });
      for (const fragment of fragments(call.function.arguments)) {
        deltas.push({ tool_calls: [{ index, function: { arguments: fragment } }] });
      }
    });
  } else if (!isToolCallsReply(answer)) {
    for (const word of splitWords(answer.text)) deltas.push({ content: word });
  }

  for (const delta of deltas) {
    if (!(await stream.send(chunk(delta)))) return;
  }
  if (!(await stream.send(chunk({}, toolCalls ? 'tool_calls' : 'stop')))) return;
  if (usage && !(await stream.send({ ...completion, object: 'chat.completion.chunk', choices: [], usage }))) return;
  await stream.end('[DONE]');
}

/** Words with their trailing whitespace, so the deltas concatenate back to the exact text. */
function splitWords(text: string): string[] {
  return text.split(/(?<=\s)(?=\S)/).filter((word) => word.length > 0);
}

function fragments(text: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += ARGUMENT_FRAGMENT_LENGTH) {
    pieces.push(text.slice(i, i + ARGUMENT_FRAGMENT_LENGTH));
  }
  return pieces;
}

function computeUsage(messages: readonly ModelMessage[], answer: ModelReply, context: RouteContext): Usage {
  const count = (text: string) => context.model.countTokens(text);
  const prompt = messages.reduce(
    (sum, message) =>
      sum +
      count(message.text) +
      (message.toolCalls ?? []).reduce((calls, call) => calls + count(`${call.name} ${call.arguments}`), 0),
    0,
  );
  const completion = isToolCallsReply(answer)
    ? answer.toolCalls.reduce((sum, call) => sum + count(`${call.name} ${call.arguments}`), 0)
    : count(answer.text);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function parseRequest(body: unknown): ChatCompletionRequest {
  if (!isRecord(body)) throw new InvalidRequestError('The request body must be a JSON object.', 'body');
  if (typeof body.model !== 'string' || body.model.length === 0) {
    throw new InvalidRequestError('`model` is required and must be a string.', 'model');
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw new InvalidRequestError('`messages` is required and must be a non-empty array.', 'messages');
  }
  const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
  const tools = body.tool_choice === 'none' ? [] : parseTools(body.tools);
  return {
    model: body.model,
    messages: body.messages.map((message, index) => parseMessage(message, `messages[${index}]`)),
    tools,
    stream: body.stream === true,
    includeUsage: streamOptions.include_usage === true,
    store: body.store === true,
    metadata: parseMetadata(body.metadata),
    rawMessages: body.messages as Record<string, unknown>[],
  };
}

function parseMessage(message: unknown, param: string): ModelMessage {
  if (!isRecord(message)) throw new InvalidRequestError(`${param} must be an object.`, param);
  const text = contentText(message.content, `${param}.content`);
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', text };
    case 'user':
      return { role: 'user', text };
    case 'assistant': {
      const toolCalls = parseToolCalls(message.tool_calls, `${param}.tool_calls`);
      return toolCalls.length > 0 ? { role: 'assistant', text, toolCalls } : { role: 'assistant', text };
    }
    case 'tool':
      if (typeof message.tool_call_id !== 'string') {
        throw new InvalidRequestError(`${param}.tool_call_id is required for a tool message.`, `${param}.tool_call_id`);
      }
      return { role: 'tool', text, toolCallId: message.tool_call_id };
    default:
      throw new InvalidRequestError(
        `${param}.role must be one of system, developer, user, assistant, tool; got ${JSON.stringify(message.role)}.`,
        `${param}.role`,
      );
  }
}

/** String content, or the text of `{type:'text'}` parts; other part kinds carry no text here. */
function contentText(content: unknown, param: string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new InvalidRequestError(`${param} must be a string or an array of parts.`, param);
  return content
    .map((part) => (isRecord(part) && part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

function parseToolCalls(toolCalls: unknown, param: string): ModelToolCall[] {
  if (toolCalls === undefined || toolCalls === null) return [];
  if (!Array.isArray(toolCalls)) throw new InvalidRequestError(`${param} must be an array.`, param);
  return toolCalls.map((call, index) => {
    const fn = isRecord(call) && isRecord(call.function) ? call.function : undefined;
    if (!isRecord(call) || typeof call.id !== 'string' || !fn || typeof fn.name !== 'string') {
      throw new InvalidRequestError(`${param}[${index}] needs an id and function.name.`, `${param}[${index}]`);
    }
    return { id: call.id, name: fn.name, arguments: typeof fn.arguments === 'string' ? fn.arguments : '{}' };
  });
}

function parseTools(tools: unknown): ModelTool[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw new InvalidRequestError('`tools` must be an array.', 'tools');
  return tools.map((tool, index) => {
    const fn = isRecord(tool) && tool.type === 'function' && isRecord(tool.function) ? tool.function : undefined;
    if (!fn || typeof fn.name !== 'string') {
      throw new InvalidRequestError(
        `tools[${index}] must be {type:"function", function:{name, description?, parameters?}}.`,
        `tools[${index}]`,
      );
    }
    return {
      name: fn.name,
      ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
      ...(isRecord(fn.parameters) ? { parameters: fn.parameters } : {}),
    };
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
