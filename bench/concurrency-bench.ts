/**
 * One agent, many concurrent conversations on the emulator: every conversation introduces
 * itself by its own name and must get exactly that name back (no cross-talk). Then the idle
 * threads' heap is compared with the JSON size of their messages.
 */
import { type AgentThread, ChatAgent } from 'skein';
import { OpenAIChatClient } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { startFixedReplyServer } from './fixed-reply-server.js';
import { skeinAgent, userText } from './turns-bench.js';

/** Idle threads' heap vs the JSON of their messages. */
export interface IdleThreadMemory {
  messagesPerThread: number;
  /** Heap held per idle thread (bytes), from a forced GC before and after dropping them; undefined without --expose-gc. */
  heapBytesPerThread?: number;
  /** JSON.stringify of the thread's messages, bytes. */
  jsonBytesPerThread: number;
  /** JSON.stringify of the whole serialized thread, bytes. */
  serializedBytesPerThread: number;
  memoryRatio?: number;
}

export interface ConcurrencyResult extends IdleThreadMemory {
  conversations: number;
  turnsEach: number;
  wallMs: number;
  /** Conversations whose answer named another conversation (or none). */
  crossTalk: number;
}

/** Idle threads of the bench's 50-turn conversation (longer messages than the concurrency run's). */
export interface LongThreadMemory extends IdleThreadMemory {
  threads: number;
  turnsEach: number;
}
type Gc = () => void;

/** Heap in use after full collections; yields to the event loop first so finished requests let go. */
async function heapAfterGc(): Promise<number | undefined> {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (!gc) return undefined;
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    gc();
  }
  return process.memoryUsage().heapUsed;
}

export async function runConcurrency(conversations: number): Promise<ConcurrencyResult> {
  const emulator = await Emulator.start();
  let stopped = false;
  try {
    const agent = new ChatAgent({
      chatClient: new OpenAIChatClient({ apiKey: 'emulator', baseURL: emulator.openaiBaseURL, model: 'gpt-4.1' }),
      name: 'concierge',
      instructions: 'You are a helpful assistant.',
    });
    let threads: AgentThread[] = [];
    const names = Array.from({ length: conversations }, (_, i) => `Guest${i.toString().padStart(4, '0')}`);
    const start = performance.now();
    const answers = await Promise.all(
      names.map(async (name) => {
        const thread = agent.getNewThread();
        threads.push(thread);
        await agent.run(`My name is ${name}.`, { thread });
        return (await agent.run("What's my name?", { thread })).text;
      }),
    );
    const wallMs = performance.now() - start;
    const crossTalk = answers.filter((answer, i) => answer !== `Your name is ${names[i]}.`).length;

    emulator.requests.length = 0; // the emulator's own request log is not thread memory
    // Stop the server first: its connections, and the client's pooled sockets, close and are
    // freed over the next seconds, which would otherwise be counted as thread memory.
    await emulator.stop();
    stopped = true;
    const held = { threads };
    threads = [];
    const result: ConcurrencyResult = { conversations, turnsEach: 2, wallMs, crossTalk, ...(await idleThreadMemory(held)) };
    return result;
  } finally {
    if (!stopped) await emulator.stop();
  }
}

/**
 * Heap of idle threads vs the JSON of their messages. Empties `held.threads` (the caller must
 * hold no other reference) and counts what a full GC then frees, per thread.
 */
async function idleThreadMemory(held: { threads: AgentThread[] }): Promise<IdleThreadMemory> {
  const count = held.threads.length;
  let json = 0;
  let serialized = 0;
  let messages = 0;
  for (const thread of held.threads) {
    const list = await thread.messageStore!.listMessages();
    messages += list.length;
    json += Buffer.byteLength(JSON.stringify(list));
    serialized += Buffer.byteLength(JSON.stringify(await thread.serialize()));
  }
  const before = await heapAfterGc();
  held.threads = [];
  const after = await heapAfterGc();
  const result: IdleThreadMemory = { messagesPerThread: messages / count, jsonBytesPerThread: json / count, serializedBytesPerThread: serialized / count };
  if (before !== undefined && after !== undefined) {
    result.heapBytesPerThread = (before - after) / count;
    result.memoryRatio = result.heapBytesPerThread / result.jsonBytesPerThread;
  }
  return result;
}

/**
 * Idle threads after `turnsEach` turns of the turns bench's conversation (user texts of ~55
 * characters, replies of ~85) against the fixed-reply server: how the ratio moves when messages
 * are longer than the concurrency run's 15–28 characters.
 */
export async function runLongThreadMemory(threadCount: number, turnsEach: number): Promise<LongThreadMemory> {
  const server = await startFixedReplyServer();
  let stopped = false;
  try {
    const agent = skeinAgent(server.baseURL);
    let threads: AgentThread[] = [];
    await Promise.all(
      Array.from({ length: threadCount }, async () => {
        const thread = agent.getNewThread();
        threads.push(thread);
        for (let turn = 0; turn < turnsEach; turn++) await agent.run(userText(turn), { thread });
      }),
    );
    await server.stop(); // its sockets close before measuring, as above
    stopped = true;
    const held = { threads };
    threads = [];
    return { threads: threadCount, turnsEach, ...(await idleThreadMemory(held)) };
  } finally {
    if (!stopped) await server.stop();
  }
}
