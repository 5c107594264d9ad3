import OpenAI from 'openai';
import { ServerSentEventParser } from 'skein';

/**
 * The JSON events of a streamed Chat Completions or Responses reply, read from the raw
 * `Response` with one parser, as the SDK's `Stream` would yield them: `[DONE]` ends the
 * events, an event whose data carries `error` throws the SDK's `APIError`, data that is not JSON
 * throws its SyntaxError. The SDK's stream stacks four async iterators per event (body chunks,
 * SSE chunks, lines, messages) and copies the bytes at each; this reads each piece of the body
 * once and yields its events, a visible share of a streamed turn (docs/performance.md).
 * Assistants streams (`thread.*` events) keep the SDK's own helper.
 */
export async function* sseJsonEvents<T>(response: Response): AsyncGenerator<T, void, undefined> {
  if (!response.body) throw new OpenAI.OpenAIError('Attempted to iterate over a response with no body');
  const reader = response.body.getReader();
  const parser = new ServerSentEventParser();
  const batch: T[] = [];
  let failure: unknown;
  let done = false;
  let finished = false;
  const onEvent = (event: { data: string }) => {
    if (done || failure !== undefined) return;
    if (event.data.startsWith('[DONE]')) {
      done = true;
      return;
    }
    try {
      const data = JSON.parse(event.data) as T & { error?: unknown };
      if (data && data.error) throw new OpenAI.APIError(undefined, data.error as object, undefined, response.headers);
      batch.push(data);
    } catch (error) {
      failure = error;
    }
  };
  try {
    for (;;) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      parser.push(value, onEvent);
      // Events before a failing one still reach the caller, as with the SDK's stream.
      for (let i = 0; i < batch.length; i++) yield batch[i]!;
      batch.length = 0;
      if (failure !== undefined) throw failure;
    }
    parser.end();
    finished = true;
  } finally {
    // Stopped early (the consumer left, or an event failed): the rest of the body is not wanted.
    if (finished) reader.releaseLock();
    else reader.cancel().catch(() => {});
  }
}

/** The SDK's `APIPromise.asResponse` (call it on `call`); undefined for a stand-in client's plain promise. */
function asResponseOf(call: Promise<unknown>): ((this: Promise<unknown>) => Promise<Response>) | undefined {
  const raw = (call as { asResponse?: (this: Promise<unknown>) => Promise<Response> }).asResponse;
  return typeof raw === 'function' ? raw : undefined;
}

/**
 * `create(...)`'s raw Response when the client is the SDK's; a stand-in client's own stream otherwise.
 * Not an async function: a suspended one keeps its frame alive while the request is in flight,
 * bytes per concurrent stream (docs/performance.md, RSS per active run).
 */
export function streamedEvents<T>(call: Promise<AsyncIterable<T>>): Promise<AsyncIterable<T>> {
  const asResponse = asResponseOf(call);
  return asResponse ? asResponse.call(call).then(sseJsonEvents<T>) : call;
}

/**
 * `create(...)`'s JSON body, parsed from the raw Response: the SDK's own parse step formats its
 * debug log details for every reply, logged or not. A stand-in client's value is taken as it is.
 */
export async function parsedReply<T>(call: Promise<T>): Promise<T> {
  const asResponse = asResponseOf(call);
  return asResponse ? ((await (await asResponse.call(call)).json()) as T) : call;
}
