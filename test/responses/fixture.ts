import OpenAI from 'openai';
import { type AgentConfig, type AgentThread, type AIAgent, agentToken, ChatAgent, createContainer, tool } from 'skein';
import { openaiPlugin } from 'skein/openai';
import { Emulator, type RecordedRequest } from 'skein/testing';
import { z } from 'zod';

/** A weather tool the emulated model calls on "call get_weather {...}". */
export const weather = tool({
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `sunny in ${city}`,
});

/** A fresh container (as a new process would build) with one agent named `assistant`. */
export function agentFor(emulator: Emulator, config: Partial<AgentConfig> = {}): ChatAgent {
  const container = createContainer({
    plugins: [openaiPlugin({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 })],
    tools: [weather],
    agents: { assistant: { client: 'openai-responses', model: 'gpt-test', ...config } },
  });
  return container.get<AIAgent>(agentToken('assistant')) as ChatAgent;
}

export function rawClient(emulator: Emulator): OpenAI {
  return new OpenAI({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 });
}

export type Body = Record<string, unknown> & { input: unknown[] | string };

export function responseBodies(emulator: Emulator): Body[] {
  return emulator.requestsTo('/v1/responses').map((r: RecordedRequest) => r.body as Body);
}

/** A JSON round trip, as a thread stored in a database and read by another process. */
export function viaJson<T>(value: T): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

/**
 * Runs `prompt` (a get_weather call) with a tool that serializes the thread and aborts the run
 * while it executes — the state a process dying mid tool exchange leaves — and returns that JSON.
 */
export async function serializedMidToolExchange(
  agent: AIAgent,
  thread: AgentThread,
  prompt = 'call get_weather {"city":"Oslo"}',
): Promise<{ saved: unknown; error: unknown }> {
  const controller = new AbortController();
  let saved: unknown;
  const interrupting = tool({
    name: 'get_weather',
    parameters: z.object({ city: z.string() }),
    execute: async (_args, context) => {
      saved = viaJson(await context.thread!.serialize());
      controller.abort(); // the process dies while the tool runs
      return 'never delivered';
    },
  });
  const error = await agent.run(prompt, { thread, tools: [interrupting], signal: controller.signal }).then(
    () => undefined,
    (e: unknown) => e,
  );
  return { saved, error };
}
