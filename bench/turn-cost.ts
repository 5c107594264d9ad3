/**
 * One contender's CPU per turn with no sockets: the SDK's `fetch` is replaced by an in-memory one
 * that answers as the fixed-reply server does (same bytes, a fresh Response per request), so what
 * is left is the client-side work of a turn. For profiling and instruction counts, alone in a process:
 *   node dist/bench/turn-cost.js <contender> [conversations] [turns] [warm-up conversations]
 *   node --cpu-prof dist/bench/turn-cost.js "Skein runStream" 200 50
 *   valgrind --tool=callgrind node --single-threaded dist/bench/turn-cost.js "Skein runStream" 20 50 0
 * Contender names as in turns-bench.ts: "openai SDK", "Skein run", "openai SDK stream", "Skein runStream".
 * Prints one JSON line: CPU and wall per turn, and mean(last 5 turns) / mean(first 5 turns) of CPU.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { replyTo } from './fixed-reply-server.js';
import { mean, median } from './stats.js';
import type OpenAI from 'openai';
import { type Contender, coreContenders, type Endpoint, userText } from './turns-bench.js';

/** The fixed-reply server's answer, without a server: the body is read as the server drains it. */
export const inMemoryFetch: typeof fetch = async (_input, init) => {
  const body = typeof init?.body === 'string' ? Buffer.from(init.body) : Buffer.alloc(0);
  const reply = replyTo(body);
  return new Response(new Uint8Array(reply.body), { status: 200, headers: { 'content-type': reply.contentType, 'content-length': String(reply.body.length) } });
};

/** The fixed-reply server's streamed chunks, parsed once. */
function streamedChunks(): unknown[] {
  const sse = replyTo(Buffer.from('"stream":true')).body.toString();
  return sse
    .split('\n\n')
    .filter((event) => event.startsWith('data: {'))
    .map((event) => JSON.parse(event.slice('data: '.length)) as unknown);
}

/**
 * An `openai`-shaped client with no SDK behind it: `chat.completions.create` answers at once
 * with the fixed reply (parsed once), so a Skein contender on it measures Skein's own work only.
 */
export function noSdkClient(): OpenAI {
  const chunks = streamedChunks();
  const completion = JSON.parse(replyTo(Buffer.from('{}')).body.toString()) as unknown;
  async function* stream() {
    for (const chunk of chunks) yield chunk;
  }
  const create = (request: { stream?: boolean }) => Promise.resolve(request.stream ? stream() : completion);
  return { chat: { completions: { create } } } as unknown as OpenAI;
}

export interface TurnCost {
  contender: string;
  conversations: number;
  turns: number;
  cpuUsPerTurn: number;
  wallUsPerTurn: number;
  /** Median over conversations of mean CPU of the last 5 turns / the first 5. */
  flatnessCpu: number;
}

/** A core contender by name, on the in-memory fetch; "<name> (no SDK)": a Skein contender on noSdkClient(). */
export function inMemoryContender(name: string): Contender {
  const bare = name.endsWith(' (no SDK)');
  const endpoint: Endpoint = bare ? { client: noSdkClient() } : { baseURL: 'http://in-memory.invalid/v1', fetch: inMemoryFetch };
  const contender = coreContenders(endpoint).find((c) => c.name === (bare ? name.slice(0, -' (no SDK)'.length) : name));
  if (!contender) throw new Error(`no contender "${name}"; expected "openai SDK", "Skein run", "openai SDK stream" or "Skein runStream", optionally with " (no SDK)"`);
  return contender;
}

export async function turnCost(name: string, conversations: number, turns: number, warmup: number): Promise<TurnCost> {
  const contender = inMemoryContender(name);
  const flat: number[] = [];
  let cpuUs = 0;
  let wallUs = 0;
  for (let c = 0; c < warmup + conversations; c++) {
    const conversation = contender.newConversation();
    const perTurn: number[] = [];
    for (let t = 0; t < turns; t++) {
      const cpu = process.cpuUsage();
      const start = performance.now();
      await conversation.turn(userText(t));
      const used = process.cpuUsage(cpu);
      perTurn.push(used.user + used.system);
      if (c >= warmup) wallUs += (performance.now() - start) * 1000;
    }
    if (c < warmup) continue;
    cpuUs += perTurn.reduce((a, b) => a + b, 0);
    flat.push(mean(perTurn.slice(-5)) / mean(perTurn.slice(0, 5)));
  }
  const n = conversations * turns;
  return { contender: name, conversations, turns, cpuUsPerTurn: cpuUs / n, wallUsPerTurn: wallUs / n, flatnessCpu: median(flat) };
}

const [name, conversations = '200', turns = '50', warmup = '20'] = process.argv.slice(2);
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) console.log(JSON.stringify(await turnCost(name ?? '', Number(conversations), Number(turns), Number(warmup))));
