import OpenAI from 'openai';
import type { Container } from 'inversify';
import { type AgentConfig, type AIAgent, agentToken, createContainer } from 'skein';
import { openaiPlugin } from 'skein/openai';
import type { Emulator } from 'skein/testing';

/** writer: Chat Completions; reviewer: Responses (stored chain); assistant: Assistants v2. */
export const THREE_AGENTS: Record<string, AgentConfig> = {
  writer: { client: 'openai-chat', model: 'gpt-test', instructions: 'You write.' },
  reviewer: { client: 'openai-responses', model: 'gpt-test', instructions: 'You review.' },
  assistant: { client: 'openai-assistants', model: 'gpt-test', instructions: 'You assist.', polling: { intervalMs: 5 } },
};

/** A fresh container, as a new process would build it. */
export function containerFor(emulator: Emulator, agents: Record<string, AgentConfig> = THREE_AGENTS): Container {
  return createContainer({
    plugins: [openaiPlugin({ apiKey: 'test-key', baseURL: emulator.openaiBaseURL, maxRetries: 0 })],
    agents,
  });
}

export function agent(container: Container, name: string): AIAgent {
  return container.get(agentToken(name));
}

export function rawClient(emulator: Emulator): OpenAI {
  return new OpenAI({ apiKey: 'test-key', baseURL: emulator.openaiBaseURL, maxRetries: 0 });
}

/** A JSON round trip, as a chat stored in a database and read by another process. */
export function viaJson<T>(value: T): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

export function texts(messages: readonly { contents: readonly { kind: string }[] }[]): string[] {
  return messages.map((m) => m.contents.map((c) => (c.kind === 'text' ? (c as unknown as { text: string }).text : '')).join(''));
}

type Body = Record<string, unknown>;
export function bodies(emulator: Emulator, path: string): Body[] {
  return emulator.requestsTo(path).map((r) => r.body as Body);
}
