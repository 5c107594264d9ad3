/**
 * One A2A server of `npm run bench:a2a`, alone in its own process so its CPU time is its own:
 *   node dist/bench/a2a/a2a-bench-server.js skein|sdk <model base URL>
 * Sends `{ url }` over IPC once listening, then answers every `'cpu'` message with this
 * process's `process.cpuUsage()` (user + system microseconds). Exits when the parent goes.
 *
 * Both servers host the same agent logic: a chat with a growing history per A2A context, the
 * model called with streaming (Chat Completions, `openai` SDK) on the fixed-reply server, each
 * text delta published as an artifact chunk, then the whole reply as one artifact and a
 * `completed` status; the same A2A events in the same order, so the SDK's own work (task
 * store, event bus, JSON-RPC) is the same on both sides.
 *  - `skein`: `A2AServer` hosting a `ChatAgent` on the `openai-chat` client, default options
 *    (in-memory context and task stores, no authentication, JSON-RPC + HTTP+JSON + 0.3).
 *  - `sdk`: a bare `@a2a-js/sdk` express server (card, JSON-RPC, HTTP+JSON, 0.3 compatibility,
 *    in-memory task store) whose `AgentExecutor` keeps each context's history in a Map and calls
 *    the `openai` SDK itself.
 */
import { AgentCard, Role, type Part, TaskState, type TaskStatus } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, DefaultRequestHandler, type ExecutionEventBus, InMemoryTaskStore, type RequestContext } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { legacyAgentCardRouter } from '@a2a-js/sdk/compat/v0_3/server/express';
import express from 'express';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { A2AServer } from 'skein/a2a';
import { INSTRUCTIONS, MODEL, skeinAgent } from '../turns-bench.js';

export type A2AContenderName = 'skein' | 'sdk';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

function status(state: TaskState): TaskStatus {
  return { state, message: undefined, timestamp: new Date().toISOString() };
}

function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** The agent logic written directly on the SDKs, as an app without Skein would. */
class BareChatExecutor implements AgentExecutor {
  readonly #client: OpenAI;
  readonly #histories = new Map<string, ChatMessage[]>();
  readonly #running = new Map<string, AbortController>();

  constructor(baseURL: string) {
    this.#client = new OpenAI({ apiKey: 'bench', baseURL });
  }

  execute = async (request: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage } = request;
    const controller = new AbortController();
    this.#running.set(taskId, controller);
    try {
      bus.publish(
        AgentEvent.task(
          request.task
            ? { ...request.task, status: status(TaskState.TASK_STATE_WORKING) }
            : { id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED), artifacts: [], history: [userMessage], metadata: undefined },
        ),
      );
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), metadata: undefined }));
      let text = '';
      for (const part of userMessage.parts) if (part.content?.$case === 'text') text += part.content.value;
      const messages: ChatMessage[] = [...(this.#histories.get(contextId) ?? [{ role: 'system', content: INSTRUCTIONS }]), { role: 'user', content: text }];
      const stream = await this.#client.chat.completions.create(
        { model: MODEL, messages, stream: true, stream_options: { include_usage: true } },
        { signal: controller.signal },
      );
      const artifactId = randomUUID();
      let reply = '';
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta.content;
        if (!delta) continue;
        const artifact = { artifactId, name: 'response', description: '', parts: [textPart(delta)], metadata: undefined, extensions: [] };
        bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: reply !== '', lastChunk: false, metadata: undefined }));
        reply += delta;
      }
      messages.push({ role: 'assistant', content: reply });
      this.#histories.set(contextId, messages);
      const artifact = { artifactId, name: 'response', description: '', parts: [textPart(reply)], metadata: undefined, extensions: [] };
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined }));
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED), metadata: undefined }));
    } catch (error) {
      if (controller.signal.aborted) return;
      const message = { messageId: randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts: [textPart('The agent could not complete this task.')], metadata: undefined, extensions: [], referenceTaskIds: [] };
      console.error(error);
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { ...status(TaskState.TASK_STATE_FAILED), message }, metadata: undefined }));
    } finally {
      this.#running.delete(taskId);
    }
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    this.#running.get(taskId)?.abort();
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: status(TaskState.TASK_STATE_CANCELED), metadata: undefined }));
  };
}

/** The bare SDK server, mounted the way the SDK documents it; resolves with its base URL. */
async function listenSdk(modelBaseURL: string): Promise<string> {
  const card: AgentCard = {
    name: 'bench',
    description: 'The A2A benchmark agent',
    version: '1.0.0',
    supportedInterfaces: [],
    provider: undefined,
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new BareChatExecutor(modelBaseURL));
  const legacyCompat = { enabled: true };
  const app = express();
  app.use('/.well-known/agent-card.json', legacyAgentCardRouter({ agentCardProvider: handler }));
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => AgentCard.toJSON(card) as AgentCard }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
  app.use('/a2a/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  card.supportedInterfaces.push(
    { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
  );
  return base;
}

async function listenSkein(modelBaseURL: string): Promise<string> {
  const server = new A2AServer({ agent: skeinAgent(modelBaseURL), logger: { warn: () => {}, error: (message, error) => console.error(message, error) } });
  return server.listen();
}

const [name, modelBaseURL] = process.argv.slice(2);
if ((name !== 'skein' && name !== 'sdk') || !modelBaseURL || !process.send) {
  throw new Error(`a2a-bench-server.js: expected skein|sdk and the model base URL, forked with IPC; found ${process.argv.slice(2).join(' ')}`);
}
const url = name === 'skein' ? await listenSkein(modelBaseURL) : await listenSdk(modelBaseURL);
process.on('message', (message) => {
  if (message !== 'cpu') return;
  const { user, system } = process.cpuUsage();
  process.send!({ cpuUs: user + system, systemUs: system });
});
// The parent's exit closes the IPC channel; do not outlive it.
process.on('disconnect', () => process.exit(0));
process.send({ url });
