import { type AgentSubscriber, HttpAgent, type RunAgentParameters } from '@ag-ui/client';
import type { BaseEvent, Message } from '@ag-ui/core';
import { Redis } from 'ioredis';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type AIAgent, type AITool, agentToken, createContainer, tool } from 'skein';
import { openaiPlugin } from 'skein/openai';
import { postgresStorePlugin, PostgresChatMessageStoreFactory } from 'skein/store-postgres';
import { redisStorePlugin } from 'skein/store-redis';
import { sqliteStorePlugin } from 'skein/store-sqlite';
import type { Emulator } from 'skein/testing';
import { agUiStateOf, setAgUiState } from 'skein/ag-ui';
import { z } from 'zod';
import { DATABASE_URL, REDIS_URL, RUN_ID } from '../stores/services.js';
import { deleteFileTool } from '../support/example-tools.js';

export const AGENT_KINDS = ['chat-sqlite', 'chat-postgres', 'chat-redis', 'responses', 'assistants'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];
export const PG_SCHEMA = `agui_${RUN_ID}`;
/** This run's Redis keys (the Redis server is shared). */
export const REDIS_PREFIX = `${RUN_ID}:agui-store:`;

/** What the test tools did, so tests can count runs. */
export interface ToolLog {
  deleted: string[];
}

export function testTools(log: ToolLog): AITool[] {
  return [
    deleteFileTool(log.deleted),
    tool({ name: 'get_weather', description: 'Weather in a city', parameters: z.object({ city: z.string() }), execute: ({ city }) => `Sunny in ${city}` }),
    addTodoTool(),
  ];
}

/** A tool that writes the AG-UI shared state: appends to `todos`. */
export function addTodoTool(): AITool {
  return tool({
    name: 'add_todo',
    description: 'Adds a todo item to the shared todo list',
    parameters: z.object({ item: z.string() }),
    execute: ({ item }, { thread }) => {
      const state = (agUiStateOf(thread!) ?? {}) as { todos?: string[] };
      setAgUiState(thread!, { ...state, todos: [...(state.todos ?? []), item] });
      return `added ${item}`;
    },
  });
}

/** The tool predictive-state tests watch: its `document` argument is streamed into the state. */
export function writeDocumentTool(written: string[]): AITool {
  return tool({ name: 'write_document', description: 'Writes the document', parameters: z.object({ document: z.string() }), execute: ({ document }) => (written.push(document), 'written') });
}

/** One container with an agent of each kind, on the emulator; sqlite in `dir`, PostgreSQL in this run's schema, Redis under this run's prefix. */
export async function agentsOn(emulator: Emulator, dir: string, log: ToolLog): Promise<{ agents: Record<AgentKind, AIAgent>; close: () => Promise<void> }> {
  const tools = ['delete_file', 'get_weather', 'add_todo'];
  const container = await createContainer({
    plugins: [
      openaiPlugin({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 }),
      sqliteStorePlugin({ path: path.join(dir, 'threads.db') }),
      postgresStorePlugin({ connectionString: DATABASE_URL, schema: PG_SCHEMA }),
      // A test Redis may keep no snapshots: the durability check (tested with the store) would only warn here.
      redisStorePlugin({ url: REDIS_URL, keyPrefix: REDIS_PREFIX, durabilityCheck: false }),
    ],
    tools: testTools(log),
    agents: {
      'chat-sqlite': { client: 'openai-chat', model: 'gpt-4.1', messageStore: 'sqlite', tools },
      'chat-postgres': { client: 'openai-chat', model: 'gpt-4.1', messageStore: 'postgres', tools },
      'chat-redis': { client: 'openai-chat', model: 'gpt-4.1', messageStore: 'redis', tools },
      responses: { client: 'openai-responses', model: 'gpt-4.1', tools },
      assistants: { client: 'openai-assistants', model: 'gpt-4.1', instructions: 'Help.', polling: { intervalMs: 1 }, tools },
    },
  });
  await container.get(PostgresChatMessageStoreFactory).migrate();
  const agents = Object.fromEntries(AGENT_KINDS.map((k) => [k, container.get<AIAgent>(agentToken(k))])) as Record<AgentKind, AIAgent>;
  const close = async () => {
    await container.unbindAllAsync();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${REDIS_PREFIX}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  };
  return { agents, close };
}

export async function tempDir(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'skein-ag-ui-'));
}

/** The official client's run (which verifies the event order), with every event it saw. */
export async function runVerified(agent: HttpAgent, params: RunAgentParameters = {}): Promise<{ events: BaseEvent[]; newMessages: Message[] }> {
  const events: BaseEvent[] = [];
  const subscriber: AgentSubscriber = {
    onEvent: ({ event }) => {
      events.push(event);
    },
  };
  const { newMessages } = await agent.runAgent(params, subscriber);
  return { events, newMessages };
}

/** Adds a user message to the client agent, as a chat page does, and runs. */
export async function say(agent: HttpAgent, text: string, params: RunAgentParameters = {}): Promise<{ events: BaseEvent[]; newMessages: Message[] }> {
  agent.addMessage({ id: `u-${Math.random().toString(36).slice(2)}`, role: 'user', content: text });
  return runVerified(agent, params);
}

export function types(events: readonly BaseEvent[]): string[] {
  return events.map((e) => e.type as string);
}

export function lastText(agent: HttpAgent): string {
  const m = [...agent.messages].reverse().find((x) => x.role === 'assistant' && typeof x.content === 'string' && x.content);
  return (m as { content?: string } | undefined)?.content ?? '';
}

export async function postRaw(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

export { HttpAgent };
