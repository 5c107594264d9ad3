import { type Message, Role, TaskState, type TaskStatus } from '@a2a-js/sdk';
import { randomUUID } from 'node:crypto';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { AgentCard } from '@a2a-js/sdk';
import { legacyAgentCardRouter } from '@a2a-js/sdk/compat/v0_3/server/express';
import express, { type RequestHandler } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type A2AAgent, type A2ARunResponse, agentMessage, artifact, partsText, textPart } from 'skein/a2a';
import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';

function status(state: TaskState, message?: Message): TaskStatus {
  return { state, message, timestamp: new Date().toISOString() };
}

/**
 * A remote agent written directly on the SDK, for what a hosted Skein agent never does: ask for
 * input, reject, ask for auth, and hold a task open until it is canceled.
 *  - "weather": input-required ("Which city?"); the answer completes with "Weather in <city>: sunny".
 *  - "files": a message with text, a data part, a file (bytes) and a file URL, both named.
 *  - "reject": rejected.  - "auth": auth-required.  - "hold": streams "started", waits for a cancel.
 */
export class ScriptedExecutor implements AgentExecutor {
  readonly continuations: { taskId: string; contextId: string; text: string }[] = [];
  readonly canceled: string[] = [];
  #onStarted: ((taskId: string) => void) | undefined;
  #onCanceled: ((taskId: string) => void) | undefined;
  readonly #held = new Map<string, () => void>();

  /** Resolves with the task id once a "hold" task is running. */
  started(): Promise<string> {
    return new Promise((resolve) => (this.#onStarted = resolve));
  }

  /** Resolves with the task id when the client's cancel reaches this executor. */
  whenCanceled(): Promise<string> {
    return new Promise((resolve) => (this.#onCanceled = resolve));
  }

  execute = async (request: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = request;
    const text = partsText(request.userMessage.parts);
    const ids = { taskId, contextId };
    if (request.task) {
      this.continuations.push({ taskId, contextId, text });
      bus.publish(AgentEvent.task({ ...request.task, status: status(TaskState.TASK_STATE_WORKING) }));
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: artifact('forecast', [textPart(`Weather in ${text}: sunny`)]), append: false, lastChunk: true, metadata: undefined }));
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED), metadata: undefined }));
      return;
    }
    if (text === 'files') {
      const parts: Message['parts'] = [
        textPart('here you are'),
        { content: { $case: 'data', value: { total: 3, items: ['a', 'b'] } }, metadata: undefined, filename: '', mediaType: 'application/json' },
        { content: { $case: 'raw', value: Buffer.from('a,b\n1,2\n') }, metadata: undefined, filename: 'report.csv', mediaType: 'text/csv' },
        { content: { $case: 'url', value: 'https://files.example/q3.pdf' }, metadata: undefined, filename: 'q3-summary.pdf', mediaType: 'application/pdf' },
      ];
      bus.publish(AgentEvent.message(agentMessage(parts, ids)));
      return;
    }
    if (!/weather|reject|auth|hold/.test(text)) {
      bus.publish(AgentEvent.message(agentMessage([textPart(`echo: ${text}`)], ids)));
      return;
    }
    bus.publish(AgentEvent.task({ id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED), artifacts: [], history: [request.userMessage], metadata: undefined }));
    if (text.includes('weather')) {
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: artifact('note', [textPart('(looking up weather)')]), append: false, lastChunk: true, metadata: undefined }));
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage([textPart('Which city?')], ids)), metadata: undefined }));
    } else if (text.includes('reject')) {
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_REJECTED, agentMessage([textPart('I only do weather.')], ids)), metadata: undefined }));
    } else if (text.includes('auth')) {
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_AUTH_REQUIRED, agentMessage([textPart('Sign in first.')], ids)), metadata: undefined }));
    } else if (text.includes('hold')) {
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), metadata: undefined }));
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: artifact('progress', [textPart('started')]), append: false, lastChunk: false, metadata: undefined }));
      await new Promise<void>((resolve) => {
        this.#held.set(taskId, resolve);
        this.#onStarted?.(taskId);
      });
    }
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    this.canceled.push(taskId);
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: status(TaskState.TASK_STATE_CANCELED), metadata: undefined }));
    this.#held.get(taskId)?.();
    this.#onCanceled?.(taskId);
  };
}

export interface SdkServerOptions {
  streaming?: boolean;
  /** Express middleware in front of everything (a gateway: auth checks, injected failures). */
  gate?: RequestHandler;
  /** Card fields to set (security schemes and requirements). */
  card?: Partial<Pick<AgentCard, 'securitySchemes' | 'securityRequirements'>>;
  /** Declare and serve HTTP+JSON (REST) only, instead of JSON-RPC. */
  rest?: boolean;
  /** Serve A2A 0.3 only, through the SDK's compatibility layer (a 0.3 card and interface). */
  legacy?: boolean;
}

/** The card of a scripted remote agent, with no interfaces yet (the server adds where it listens). */
export function scriptedCard(name: string, description: string, options: Partial<Pick<AgentCard, 'securitySchemes' | 'securityRequirements'>> & { streaming?: boolean } = {}): AgentCard {
  return {
    name,
    description,
    version: '1.0.0',
    supportedInterfaces: [],
    provider: undefined,
    capabilities: { streaming: options.streaming ?? true, pushNotifications: false, extensions: [] },
    securitySchemes: options.securitySchemes ?? {},
    securityRequirements: options.securityRequirements ?? [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
}

/**
 * What a user does with the ScriptedExecutor's remote: "weather" asks which city (input-required),
 * the streamed answer continues that task, and a new thread gets a direct echo.
 */
export async function expectScriptedConversation(agent: A2AAgent): Promise<void> {
  const thread = agent.getNewThread();
  const asked = (await agent.run('weather', { thread })) as A2ARunResponse;
  expect(asked.inputRequired).to.equal(true);
  expect(asked.text).to.contain('Which city?');
  const updates = await lastValueFrom(agent.runStream('Paris', { thread }).pipe(toArray()));
  expect(updates.map((u) => u.text).join('')).to.equal('Weather in Paris: sunny');
  expect((await agent.run('hello', { thread: agent.getNewThread() })).text).to.equal('echo: hello');
}

/** The SDK's own server (express, JSON-RPC or REST) on 127.0.0.1 and a free port. */
export async function startSdkServer(executor: AgentExecutor, options: SdkServerOptions = {}) {
  const card = scriptedCard('scripted', 'A scripted remote agent', { ...options.card, streaming: options.streaming });
  const taskStore = new InMemoryTaskStore();
  const handler = new DefaultRequestHandler(card, taskStore, executor);
  const app = express();
  if (options.gate) app.use(options.gate);
  const legacyCompat = { enabled: options.legacy === true };
  if (options.legacy) {
    // A 0.3 server ignores A2A-Version and serves its 0.3 card; without the header the SDK's compat router does the same.
    app.use('/.well-known/agent-card.json', (req, _res, next) => {
      delete req.headers['a2a-version'];
      next();
    });
    app.use('/.well-known/agent-card.json', legacyAgentCardRouter({ agentCardProvider: handler }));
  }
  // The card as the spec's JSON (security schemes keyed by kind), as real 1.0 servers publish it.
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => AgentCard.toJSON(card) as AgentCard }));
  if (options.rest) app.use('/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
  else app.use('/rpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  card.supportedInterfaces.push({
    url: options.rest ? `${base}/rest` : `${base}/rpc`,
    protocolBinding: options.rest ? 'HTTP+JSON' : 'JSONRPC',
    tenant: '',
    protocolVersion: options.legacy ? '0.3' : '1.0',
  });
  return {
    base,
    cardUrl: `${base}/.well-known/agent-card.json`,
    taskStore,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A user message as an SDK client sends it: text (and any extra parts), on a context / task when given. */
export function userMessage(text: string, ids: { contextId?: string; taskId?: string } = {}, extra: Message['parts'] = []): Message {
  const parts: Message['parts'] = text === '' ? [] : [textPart(text)];
  return {
    messageId: randomUUID(),
    contextId: ids.contextId ?? '',
    taskId: ids.taskId ?? '',
    role: Role.ROLE_USER,
    parts: [...parts, ...extra],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}
