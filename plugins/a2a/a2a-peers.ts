import type * as A2A from '@a2a-js/sdk';
import type * as A2AClient from '@a2a-js/sdk/client';
import type * as A2AErrors from '@a2a-js/sdk/errors';
import type * as A2AServer from '@a2a-js/sdk/server';
import type * as OTel from '@opentelemetry/api';
import { loadPeer, requirePeers } from 'skein';

// @a2a-js/sdk and express are optional peers: checked first (one error naming every missing
// one), then loaded at run time rather than linked statically (see `loadPeer`). The express
// side lives in express-peers.ts so these declarations never mention express's types.
export const A2A_ENTRY_POINT = 'skein/a2a';
requirePeers(A2A_ENTRY_POINT, ['@a2a-js/sdk', 'express']);

const a2a = loadPeer<typeof A2A>(A2A_ENTRY_POINT, '@a2a-js/sdk');
export const { A2A_CONTENT_TYPE, A2A_VERSION_HEADER, AGENT_CARD_PATH, Role, TaskState } = a2a;
export type Role = A2A.Role;
/** The protocol's JSON form of a card, as 1.0 servers publish it. */
export const agentCardToJson = (card: A2A.AgentCard): unknown => a2a.AgentCard.toJSON(card);
export const taskToJson = (task: A2A.Task): unknown => a2a.Task.toJSON(task);
export const taskFromJson = (json: unknown): A2A.Task => a2a.Task.fromJSON(json);
export type TaskState = A2A.TaskState;
export const { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } = loadPeer<typeof A2AClient>(
  A2A_ENTRY_POINT,
  '@a2a-js/sdk/client',
);
export type ClientFactory = A2AClient.ClientFactory;
export type DefaultAgentCardResolver = A2AClient.DefaultAgentCardResolver;
export const { AgentEvent, DefaultPushNotificationSender, DefaultRequestHandler, InMemoryPushNotificationStore, InMemoryTaskStore, STATE_HEADERS_KEY } =
  loadPeer<typeof A2AServer>(A2A_ENTRY_POINT, '@a2a-js/sdk/server');
export type DefaultRequestHandler = A2AServer.DefaultRequestHandler;
export type InMemoryTaskStore = A2AServer.InMemoryTaskStore;
export const { A2AError, ContentTypeNotSupportedError, RequestMalformedError, TaskNotFoundError, restStatusFor, toJsonRpcError, toRestErrorBody } = loadPeer<typeof A2AErrors>(
  A2A_ENTRY_POINT,
  '@a2a-js/sdk/errors',
);

/**
 * OpenTelemetry's API when the app has it (an optional peer): trace context goes out and comes in
 * through it; without it there is no trace to carry and nothing is sent or read.
 */
export const otel: typeof OTel | undefined = (() => {
  try {
    return loadPeer<typeof OTel>(A2A_ENTRY_POINT, '@opentelemetry/api');
  } catch {
    return undefined;
  }
})();
