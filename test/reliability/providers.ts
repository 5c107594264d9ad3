import 'reflect-metadata';
import type { AgentsClient } from '@azure/ai-agents';
import { expect } from 'chai';
import { inspect } from 'node:util';
import OpenAI from 'openai';
import sinon from 'sinon';
import { type AIAgent, type AITool, type AgentRunOptions, type AgentThread, type ChatMessage, ChatAgent, type ThreadConcurrency } from 'skein';
import { A2AAgent, A2AServer } from 'skein/a2a';
import { AzureAIAgent, createEmulatorAgentsClient } from 'skein/azure-ai-agents';
import { OpenAIAssistantAgent, OpenAIChatClient, OpenAIResponsesClient } from 'skein/openai';
import type { Emulator } from 'skein/testing';
import { emulatorPerTest } from '../support/emulator.js';

/** Credentials a harness configures; the secrets test searches everything for them. */
export interface HarnessSecrets {
  /** The OpenAI API key (also the emulator's expected key). */
  apiKey: string;
  /** The bearer token the Foundry credential hands out. */
  azureToken: string;
  /** A header token the A2A client sends. */
  a2aToken: string;
}

export interface HarnessOptions {
  /** SDK retries; 0 unless a test is about retries. */
  maxRetries?: number;
  /** SDK per-request timeout (OpenAI clients). */
  timeoutMs?: number;
  tools?: readonly AITool[];
  concurrency?: ThreadConcurrency;
  secrets?: HarnessSecrets;
}

/** One provider, wired to the emulator through its real SDK. */
export interface ProviderHarness {
  readonly id: string;
  readonly agent: AIAgent;
  /** Where the model call of the next run on `thread` goes: a fault there hits that run. */
  modelCall(thread: AgentThread): { path: string; method: string };
  /**
   * Throws when the conversation behind `thread` is not well formed: a tool call without its
   * result in a message store, or a service run left waiting (for tool outputs or in progress).
   */
  assertWellFormed(thread: AgentThread): Promise<void>;
  close(): Promise<void>;
}

export interface ProviderCase {
  id: string;
  /** Where the history lives; decides what "unchanged" can be checked against. */
  history: 'message-store' | 'service';
  /** Whether the SDK `timeout` option is wired through this harness. */
  sdkTimeout: boolean;
  /**
   * The service may keep the input of a turn whose run it created before the failure (the reply
   * was lost, cut or aborted: the input went with the run). A run that was never created leaves
   * nothing. The local thread is unchanged either way.
   */
  serviceMayKeepFailedInput: boolean;
  create(emulator: Emulator, options?: HarnessOptions): Promise<ProviderHarness>;
}

export const DEFAULT_SECRETS: HarnessSecrets = { apiKey: 'test', azureToken: 'foundry-token', a2aToken: 'a2a-token' };

const TERMINAL_RUN_STATES = new Set(['completed', 'cancelled', 'failed', 'expired', 'incomplete']);

/** Every function call in `messages` has its result, after it; roles are valid; no empty message. */
export function assertMessagesWellFormed(messages: readonly ChatMessage[], where = 'thread'): void {
  const open = new Map<string, string>();
  messages.forEach((message, i) => {
    expect(['system', 'user', 'assistant', 'tool'], `${where}[${i}].role`).to.include(message.role);
    expect(message.contents.length, `${where}[${i}] has contents`).to.be.greaterThan(0);
    for (const content of message.contents) {
      if (content.kind === 'function-call') open.set(content.callId, content.name);
      if (content.kind === 'function-result') {
        expect(open.has(content.callId), `${where}[${i}]: result for unknown call ${content.callId}`).to.equal(true);
        open.delete(content.callId);
      }
    }
  });
  expect([...open.values()], `${where}: tool calls without results`).to.deep.equal([]);
}

async function assertStoreWellFormed(thread: AgentThread): Promise<void> {
  if (thread.messageStore) assertMessagesWellFormed(await thread.messageStore.listMessages());
}

function openaiOptions(emulator: Emulator, options: HarnessOptions) {
  return {
    apiKey: options.secrets?.apiKey ?? DEFAULT_SECRETS.apiKey,
    baseURL: emulator.openaiBaseURL,
    maxRetries: options.maxRetries ?? 0,
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
  };
}

function chatAgent(emulator: Emulator, options: HarnessOptions, name = 'assistant'): ChatAgent {
  return new ChatAgent({
    chatClient: new OpenAIChatClient({ ...openaiOptions(emulator, options), model: 'gpt-test' }),
    name,
    tools: options.tools,
    concurrency: options.concurrency,
  });
}

export const openaiChat: ProviderCase = {
  id: 'openai-chat',
  history: 'message-store',
  sdkTimeout: true,
  serviceMayKeepFailedInput: false,
  async create(emulator, options = {}) {
    return {
      id: this.id,
      agent: chatAgent(emulator, options),
      modelCall: () => ({ path: '/v1/chat/completions', method: 'POST' }),
      assertWellFormed: assertStoreWellFormed,
      close: async () => {},
    };
  },
};

function responsesCase(store: boolean): ProviderCase {
  return {
    id: store ? 'openai-responses' : 'openai-responses (store: false)',
    history: store ? 'service' : 'message-store',
    sdkTimeout: true,
    serviceMayKeepFailedInput: false,
    async create(emulator, options = {}) {
      const agent = new ChatAgent({
        chatClient: new OpenAIResponsesClient({ ...openaiOptions(emulator, options), model: 'gpt-test', store }),
        name: 'assistant',
        tools: options.tools,
        concurrency: options.concurrency,
      });
      return {
        id: this.id,
        agent,
        modelCall: () => ({ path: '/v1/responses', method: 'POST' }),
        // A stored response chain cannot dangle: the thread points at the last completed response.
        assertWellFormed: assertStoreWellFormed,
        close: async () => {},
      };
    },
  };
}
export const openaiResponses = responsesCase(true);
export const openaiResponsesStateless = responsesCase(false);

export const openaiAssistants: ProviderCase = {
  id: 'openai-assistants',
  history: 'service',
  sdkTimeout: true,
  serviceMayKeepFailedInput: true,
  async create(emulator, options = {}) {
    const client = new OpenAI(openaiOptions(emulator, options));
    const agent = await OpenAIAssistantAgent.create(
      client,
      { model: 'gpt-test', name: 'assistant', instructions: 'Be brief.' },
      { tools: options.tools ?? [], polling: { intervalMs: 1 }, concurrency: options.concurrency },
    );
    return {
      id: this.id,
      agent,
      modelCall: (thread) => ({ path: `/v1/threads/${thread.serviceThreadId}/runs`, method: 'POST' }),
      assertWellFormed: async (thread) => {
        if (!thread.serviceThreadId) return;
        const check = new OpenAI({ ...openaiOptions(emulator, options), maxRetries: 0 });
        for await (const run of check.beta.threads.runs.list(thread.serviceThreadId, { limit: 100 })) {
          expect(TERMINAL_RUN_STATES.has(run.status), `run ${run.id} is ${run.status}`).to.equal(true);
        }
      },
      close: async () => {},
    };
  },
};

export const azureAIAgents: ProviderCase = {
  id: 'azure-ai-agents',
  history: 'service',
  sdkTimeout: false,
  serviceMayKeepFailedInput: true,
  async create(emulator, options = {}) {
    const token = options.secrets?.azureToken ?? DEFAULT_SECRETS.azureToken;
    const connect = (maxRetries: number): AgentsClient =>
      createEmulatorAgentsClient(emulator.url, { token, clientOptions: { retryOptions: { maxRetries } } });
    const agent = new AzureAIAgent({
      client: connect(options.maxRetries ?? 0),
      model: 'gpt-test',
      name: 'assistant',
      instructions: 'You are helpful.',
      pollIntervalMs: 1,
      tools: options.tools,
      concurrency: options.concurrency,
    });
    return {
      id: this.id,
      agent,
      modelCall: (thread) => ({ path: `/api/projects/emulated/threads/${thread.serviceThreadId}/runs`, method: 'POST' }),
      assertWellFormed: async (thread) => {
        if (!thread.serviceThreadId) return;
        for await (const run of connect(0).runs.list(thread.serviceThreadId)) {
          expect(TERMINAL_RUN_STATES.has(run.status), `run ${run.id} is ${run.status}`).to.equal(true);
        }
      },
      close: async () => {},
    };
  },
};

/** An A2AAgent calling an A2AServer that hosts a Chat Completions agent on the emulator. */
export const a2a: ProviderCase = {
  id: 'a2a',
  history: 'service',
  sdkTimeout: false,
  serviceMayKeepFailedInput: false,
  async create(emulator, options = {}) {
    const server = new A2AServer({ agent: chatAgent(emulator, options, 'hosted') });
    await server.listen();
    const agent = new A2AAgent({
      url: server.agentCardUrl!,
      name: 'assistant',
      headers: { authorization: `Bearer ${options.secrets?.a2aToken ?? DEFAULT_SECRETS.a2aToken}` },
      concurrency: options.concurrency,
    });
    return {
      id: this.id,
      agent,
      // The hosted agent's model call: faults there fail the remote task.
      modelCall: () => ({ path: '/v1/chat/completions', method: 'POST' }),
      assertWellFormed: async (thread) => {
        if (!thread.serviceThreadId) return;
        const stored = await server.contextStore.load(thread.serviceThreadId);
        const messages = (stored?.thread.store?.messages ?? []) as unknown as ChatMessage[];
        assertMessagesWellFormed(messages, `hosted context ${thread.serviceThreadId}`);
      },
      close: () => server.close(),
    };
  },
};

export const ALL_PROVIDERS: readonly ProviderCase[] = [openaiChat, openaiResponses, openaiResponsesStateless, openaiAssistants, azureAIAgents, a2a];

/** The thread as another process would read it. */
export async function snapshot(thread: AgentThread): Promise<string> {
  return JSON.stringify(await thread.serialize());
}

/** The rejection of `promise`; fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

/** Waits (without a deadline) until `check` holds; the test's own timeout bounds it. */
export async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 2));
}

export type Mode = 'run' | 'runStream';

/** A streamed turn; `onText` sees each assistant text delta. Resolves with the answer text. */
export function streamTurn(agent: AIAgent, input: string, options: AgentRunOptions, onText?: (text: string) => void): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let text = '';
    agent.runStream(input, options).subscribe({
      next: (update) => {
        if (update.role !== 'assistant' || !update.text) return;
        text += update.text;
        onText?.(update.text);
      },
      error: reject,
      complete: () => resolve(text),
    });
  });
}

/** One turn by `run` or `runStream`; `onText` sees each streamed assistant text delta. Resolves with the answer text. */
export function turn(agent: AIAgent, mode: Mode, input: string, thread: AgentThread, signal?: AbortSignal, onText?: (text: string) => void): Promise<string> {
  if (mode === 'run') return agent.run(input, { thread, signal }).then((r) => r.text);
  return streamTurn(agent, input, { thread, signal }, onText);
}

/** What each test of a suite works on: a fresh emulator, and the harness the test made on it. */
export interface HarnessPerTest {
  readonly emulator: Emulator;
  harness: ProviderHarness | undefined;
}

/** For the enclosing describe: `emulatorPerTest`, and the test's harness closed after it, before its emulator stops. */
export function harnessPerTest(): HarnessPerTest {
  const slot = {
    harness: undefined as ProviderHarness | undefined,
    get emulator() {
      return access.emulator;
    },
  };
  const access = emulatorPerTest({}, {
    beforeStop: async () => {
      await slot.harness?.close();
      slot.harness = undefined;
    },
  });
  return slot;
}

/** Stubs the console for the test; returns the array every line it would have printed goes to (sinon.restore() ends it). */
export function captureConsole(): string[] {
  const logged: string[] = [];
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    sinon.stub(console, method).callsFake((...args: unknown[]) => void logged.push(args.map((a) => (typeof a === 'string' ? a : inspect(a, { depth: 8 }))).join(' ')));
  }
  return logged;
}
