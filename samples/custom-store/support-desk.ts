import type { Container } from 'inversify';
import { z } from 'zod';
import { type AIAgent, type AgentThread, type ChatMessage, agentToken, createContainer, tool } from 'skein';
import { type OpenAIPluginOptions, openaiPlugin } from 'skein/openai';
import { JSON_FILE_STORE_ID, jsonFileStorePlugin } from './json-file-store/index.js';

/** The app's own dependency: where orders are. */
export interface OrderBook {
  statusOf(orderId: string): Promise<string | undefined>;
}

/** Where the app keeps each user's serialized thread (a session table, a cookie, ...). */
export interface SessionRepository {
  load(userId: string): Promise<string | undefined>;
  save(userId: string, serializedThread: string): Promise<void>;
  delete(userId: string): Promise<void>;
}

export class InMemorySessions implements SessionRepository {
  readonly #sessions = new Map<string, string>();
  async load(userId: string): Promise<string | undefined> {
    return this.#sessions.get(userId);
  }
  async save(userId: string, serializedThread: string): Promise<void> {
    this.#sessions.set(userId, serializedThread);
  }
  async delete(userId: string): Promise<void> {
    this.#sessions.delete(userId);
  }
}

export const SUPPORT_AGENT = 'support';

export interface SupportContainerOptions {
  openai: OpenAIPluginOptions;
  /** Directory of the json-file message store. */
  threadsDirectory: string;
  orders: OrderBook;
}

/** The app's wiring: OpenAI Chat Completions, history in JSON files, one tool. */
export function createSupportContainer(options: SupportContainerOptions): Container {
  const lookupOrder = tool({
    name: 'lookup_order',
    description: 'The shipping status of an order, by its order code',
    parameters: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => (await options.orders.statusOf(orderId)) ?? `no order ${orderId}`,
  });
  return createContainer({
    plugins: [openaiPlugin(options.openai), jsonFileStorePlugin({ directory: options.threadsDirectory })],
    tools: [lookupOrder],
    agents: {
      [SUPPORT_AGENT]: {
        client: 'openai-chat',
        model: options.openai.model ?? 'gpt-4.1-mini',
        instructions: 'You are the support desk of a small shop. Use lookup_order for order questions. Answer briefly.',
        messageStore: JSON_FILE_STORE_ID,
        tools: ['lookup_order'],
      },
    },
  });
}

/** One conversation per user: resumed from its serialized thread on each question. */
export class SupportDesk {
  constructor(
    private readonly container: Container,
    private readonly sessions: SessionRepository = new InMemorySessions(),
  ) {}

  get #agent(): AIAgent {
    return this.container.get<AIAgent>(agentToken(SUPPORT_AGENT));
  }

  async ask(userId: string, question: string): Promise<string> {
    const agent = this.#agent;
    const thread = (await this.#threadOf(userId)) ?? agent.getNewThread();
    const response = await agent.run(question, { thread });
    await this.sessions.save(userId, JSON.stringify(await thread.serialize()));
    return response.text;
  }

  async history(userId: string): Promise<ChatMessage[]> {
    return (await (await this.#threadOf(userId))?.messageStore?.listMessages()) ?? [];
  }

  /** Deletes the user's conversation: the thread's file and the session. */
  async forget(userId: string): Promise<void> {
    const thread = await this.#threadOf(userId);
    if (thread) await this.#agent.deleteThread(thread);
    await this.sessions.delete(userId);
  }

  async #threadOf(userId: string): Promise<AgentThread | undefined> {
    const saved = await this.sessions.load(userId);
    return saved === undefined ? undefined : this.#agent.deserializeThread(JSON.parse(saved));
  }
}
