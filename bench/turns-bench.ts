/**
 * Per-turn cost of a growing conversation for one contender at a time (each runs alone in its
 * own process, see run-bench.ts); medians over repeated runs.
 */
import OpenAI from 'openai';
import { ChatAgent, type AgentThread } from 'skein';
import { OpenAIChatClient } from 'skein/openai';
import { FIXED_REPLY_TEXT } from './fixed-reply-server.js';
import { type Cost, mean, median, timed } from './stats.js';

export const INSTRUCTIONS = 'You are a helpful assistant.';
export const MODEL = 'bench-model';

/** One conversation of one contender: `turn` sends a user message and resolves with the reply text. */
export interface Conversation {
  turn(text: string): Promise<string>;
}

export interface Contender {
  name: string;
  /** The contender this one is compared with (its ratio's denominator); none for a baseline. */
  baseline?: string;
  newConversation(): Conversation;
}

export interface TurnsOptions {
  turns: number;
  runs: number;
  warmupRuns: number;
}

export interface ContenderResult {
  name: string;
  baseline?: string;
  /** Median over runs of each turn's cost, microseconds. */
  perTurnWallUs: number[];
  perTurnCpuUs: number[];
  /** Median per-turn cost over the whole conversation. */
  meanTurnWallUs: number;
  meanTurnCpuUs: number;
  /** Median over runs of this contender's total / its baseline's total, same run. */
  wallRatio?: number;
  cpuRatio?: number;
  /** Median over runs of mean(last 5 turns) / mean(first 5 turns). */
  flatnessWall: number;
  flatnessCpu: number;
  /** This contender's CPU flatness / its baseline's, same round: the growth with history it adds. */
  flatnessCpuRatio?: number;
  /** With several rounds: each round's own ratio (the merged ratio is their median). */
  processRatios?: { wall: number[]; cpu: number[]; flatnessCpu: number[] };
}

export function userText(turn: number): string {
  return `Turn ${turn + 1}: please answer with your usual reply.`;
}

/** One contender's turns, alone: warm-up runs, then `runs` conversations of `turns` turns. */
export async function measureTurns(contender: Contender, options: TurnsOptions): Promise<ContenderResult> {
  const runs: Cost[][] = []; // [run][turn]
  for (let run = 0; run < options.warmupRuns + options.runs; run++) {
    const conversation = contender.newConversation();
    const costs: Cost[] = [];
    for (let turn = 0; turn < options.turns; turn++) {
      let reply = '';
      costs.push(
        await timed(async () => {
          reply = await conversation.turn(userText(turn));
        }),
      );
      if (reply !== FIXED_REPLY_TEXT) throw new Error(`${contender.name} turn ${turn + 1} got ${JSON.stringify(reply)}`);
    }
    if (run >= options.warmupRuns) runs.push(costs);
  }
  const k = Math.min(5, Math.floor(options.turns / 2));
  const flatness = (key: keyof Cost) => median(runs.map((r) => mean(r.slice(-k).map((c) => c[key])) / mean(r.slice(0, k).map((c) => c[key]))));
  const perTurn = (key: keyof Cost) => Array.from({ length: options.turns }, (_, t) => median(runs.map((r) => r[t]![key])));
  return {
    name: contender.name,
    perTurnWallUs: perTurn('wallUs'),
    perTurnCpuUs: perTurn('cpuUs'),
    meanTurnWallUs: median(runs.map((r) => mean(r.map((c) => c.wallUs)))),
    meanTurnCpuUs: median(runs.map((r) => mean(r.map((c) => c.cpuUs)))),
    flatnessWall: flatness('wallUs'),
    flatnessCpu: flatness('cpuUs'),
  };
}

/**
 * Where contenders send requests: the fixed-reply server's URL, or (turn-cost.ts) that URL with an
 * in-memory `fetch` (no sockets), or an SDK-shaped client with no SDK behind it (Skein contenders only).
 */
export type Endpoint = string | { baseURL: string; fetch: typeof fetch } | { client: OpenAI };

function sdkClient(endpoint: Endpoint): OpenAI {
  if (typeof endpoint === 'string') return new OpenAI({ apiKey: 'bench', baseURL: endpoint });
  return 'client' in endpoint ? endpoint.client : new OpenAI({ apiKey: 'bench', ...endpoint });
}

type SdkMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** The raw SDK, keeping the same growing history itself. */
export function sdkContender(baseURL: Endpoint, name = 'openai SDK'): Contender {
  const client = sdkClient(baseURL);
  return {
    name,
    newConversation() {
      const history: SdkMessage[] = [{ role: 'system', content: INSTRUCTIONS }];
      return {
        async turn(text) {
          history.push({ role: 'user', content: text });
          const completion = await client.chat.completions.create({ model: MODEL, messages: history });
          const reply = completion.choices[0]?.message.content ?? '';
          history.push({ role: 'assistant', content: reply });
          return reply;
        },
      };
    },
  };
}

/** The raw SDK's own stream, folding the text deltas. */
export function sdkStreamContender(baseURL: Endpoint, name = 'openai SDK stream'): Contender {
  const client = sdkClient(baseURL);
  return {
    name,
    newConversation() {
      const history: SdkMessage[] = [{ role: 'system', content: INSTRUCTIONS }];
      return {
        async turn(text) {
          history.push({ role: 'user', content: text });
          const stream = await client.chat.completions.create({
            model: MODEL,
            messages: history,
            stream: true,
            stream_options: { include_usage: true },
          });
          let reply = '';
          for await (const chunk of stream) reply += chunk.choices[0]?.delta.content ?? '';
          history.push({ role: 'assistant', content: reply });
          return reply;
        },
      };
    },
  };
}

export function skeinAgent(endpoint: Endpoint): ChatAgent {
  return new ChatAgent({
    chatClient: new OpenAIChatClient({ client: sdkClient(endpoint), model: MODEL }),
    name: 'bench',
    instructions: INSTRUCTIONS,
  });
}

/** `agent.run` on an in-memory thread. */
export function skeinRunContender(baseURL: Endpoint, baseline = 'openai SDK'): Contender {
  const agent = skeinAgent(baseURL);
  return {
    name: 'Skein run',
    baseline,
    newConversation() {
      const thread: AgentThread = agent.getNewThread();
      return { turn: async (text) => (await agent.run(text, { thread })).text };
    },
  };
}

/** `agent.runStream` on an in-memory thread, folding the text updates. */
export function skeinStreamContender(baseURL: Endpoint, baseline = 'openai SDK stream'): Contender {
  const agent = skeinAgent(baseURL);
  return {
    name: 'Skein runStream',
    baseline,
    newConversation() {
      const thread = agent.getNewThread();
      return {
        turn: (text) =>
          new Promise<string>((resolve, reject) => {
            let reply = '';
            agent.runStream(text, { thread }).subscribe({
              next: (update) => (reply += update.text),
              error: reject,
              complete: () => resolve(reply),
            });
          }),
      };
    },
  };
}

/** The four core contenders: the raw SDK and Skein, each with and without streaming. */
export function coreContenders(baseURL: Endpoint): Contender[] {
  return [sdkContender(baseURL), skeinRunContender(baseURL), sdkStreamContender(baseURL), skeinStreamContender(baseURL)];
}

/**
 * One result per contender from several rounds of measurements (same contenders, same order,
 * ratios already set per round): medians across rounds, and each round's ratio kept, since the
 * process is the unit that varies most on a shared machine (JIT and GC timing differ per process).
 */
export function mergeProcessResults(perProcess: readonly ContenderResult[][]): ContenderResult[] {
  const first = perProcess[0] ?? [];
  return first.map((template, i) => {
    const all = perProcess.map((results) => results[i]!);
    const mid = (pick: (r: ContenderResult) => number) => median(all.map(pick));
    const merged: ContenderResult = {
      name: template.name,
      perTurnWallUs: template.perTurnWallUs.map((_, t) => mid((r) => r.perTurnWallUs[t]!)),
      perTurnCpuUs: template.perTurnCpuUs.map((_, t) => mid((r) => r.perTurnCpuUs[t]!)),
      meanTurnWallUs: mid((r) => r.meanTurnWallUs),
      meanTurnCpuUs: mid((r) => r.meanTurnCpuUs),
      flatnessWall: mid((r) => r.flatnessWall),
      flatnessCpu: mid((r) => r.flatnessCpu),
    };
    if (template.baseline !== undefined) {
      merged.baseline = template.baseline;
      merged.wallRatio = mid((r) => r.wallRatio!);
      merged.cpuRatio = mid((r) => r.cpuRatio!);
      merged.flatnessCpuRatio = mid((r) => r.flatnessCpuRatio!);
      merged.processRatios = { wall: all.map((r) => r.wallRatio!), cpu: all.map((r) => r.cpuRatio!), flatnessCpu: all.map((r) => r.flatnessCpuRatio!) };
    }
    return merged;
  });
}
