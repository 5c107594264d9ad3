/**
 * A minimal OpenAI-compatible Chat Completions server with one fixed reply, run in a child
 * process so its CPU time is never counted against a contender and costs every contender the same.
 * It drains the request body without parsing it; `"stream":true` in the body picks the SSE reply.
 */
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export const FIXED_REPLY_TEXT = 'Sure. This is the fixed reply of the benchmark server, the same for every contender.';
/** The streamed reply, split into this many text deltas. */
export const STREAM_DELTAS = 8;

const created = 1_700_000_000;
const completion = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created,
    model: 'bench-model',
    choices: [{ index: 0, message: { role: 'assistant', content: FIXED_REPLY_TEXT, refusal: null }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 10, completion_tokens: 16, total_tokens: 26 },
  }),
);

function sseBody(): Buffer {
  const chunk = (choices: unknown[], usage: unknown = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model: 'bench-model', choices, usage })}\n\n`;
  const words = FIXED_REPLY_TEXT.split(' ');
  const per = Math.ceil(words.length / STREAM_DELTAS);
  let out = chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  for (let i = 0; i < words.length; i += per) {
    const text = words.slice(i, i + per).join(' ') + (i + per < words.length ? ' ' : '');
    out += chunk([{ index: 0, delta: { content: text }, finish_reason: null }]);
  }
  out += chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]);
  out += chunk([], { prompt_tokens: 10, completion_tokens: 16, total_tokens: 26 });
  out += 'data: [DONE]\n\n';
  return Buffer.from(out);
}
const stream = sseBody();
const STREAM_MARK = Buffer.from('"stream":true');

/** The server's reply to a request body: the SSE stream when it asks for one, else the completion. */
export function replyTo(body: Buffer): { body: Buffer; contentType: string } {
  const streaming = body.includes(STREAM_MARK);
  return streaming ? { body: stream, contentType: 'text/event-stream' } : { body: completion, contentType: 'application/json' };
}

// Held replies: the scale bench measures what runs waiting for their replies hold.
let holding = false;
const held: (() => void)[] = [];

/** `/bench/hold` holds replies from now on, `/bench/held` counts them, `/bench/release` sends them and stops holding. */
function control(url: string): number {
  if (url === '/bench/hold') holding = true;
  if (url === '/bench/release') {
    holding = false;
    for (const send of held.splice(0)) send();
  }
  return held.length;
}

function serve(): Promise<number> {
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      if (request.url?.startsWith('/bench/')) {
        response.end(String(control(request.url)));
        return;
      }
      if (!request.url?.endsWith('/chat/completions')) {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found","type":"invalid_request_error"}}');
        return;
      }
      const { body, contentType } = replyTo(Buffer.concat(parts));
      const send = () => response.writeHead(200, { 'content-type': contentType, 'content-length': body.length }).end(body);
      if (holding) held.push(send);
      else send();
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

export interface FixedReplyServer {
  baseURL: string;
  stop(): Promise<void>;
}

/** Sends a control command to the server at `baseURL` (as returned by startFixedReplyServer). */
export async function serverControl(baseURL: string, command: 'hold' | 'held' | 'release'): Promise<number> {
  const response = await fetch(new URL(`/bench/${command}`, baseURL), { method: 'POST' });
  return Number(await response.text());
}

/** Forks the server and resolves once it listens. */
export function startFixedReplyServer(): Promise<FixedReplyServer> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('message', (message) => {
      const port = (message as { port: number }).port;
      resolve({
        baseURL: `http://127.0.0.1:${port}/v1`,
        stop: () =>
          new Promise<void>((done) => {
            child.once('exit', () => done());
            child.kill();
          }),
      });
    });
  });
}

if (process.argv.includes('--serve')) {
  const port = await serve();
  process.send?.({ port });
  // The parent's exit closes the IPC channel; do not outlive it.
  process.on('disconnect', () => process.exit(0));
}
