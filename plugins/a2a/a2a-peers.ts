import type * as A2A from '@a2a-js/sdk';
import type * as A2AClient from '@a2a-js/sdk/client';
import type * as A2AServer from '@a2a-js/sdk/server';
import { loadPeer, requirePeers } from 'skein';

// @a2a-js/sdk and express are optional peers: checked first (one error naming every missing
// one), then loaded at run time rather than linked statically (see `loadPeer`). The express
// side lives in express-peers.ts so these declarations never mention express's types.
export const A2A_ENTRY_POINT = 'skein/a2a';
requirePeers(A2A_ENTRY_POINT, ['@a2a-js/sdk', 'express']);

export const { AGENT_CARD_PATH, Role, TaskState } = loadPeer<typeof A2A>(A2A_ENTRY_POINT, '@a2a-js/sdk');
export type Role = A2A.Role;
export type TaskState = A2A.TaskState;
export const { ClientFactory, DefaultAgentCardResolver } = loadPeer<typeof A2AClient>(A2A_ENTRY_POINT, '@a2a-js/sdk/client');
export type ClientFactory = A2AClient.ClientFactory;
export type DefaultAgentCardResolver = A2AClient.DefaultAgentCardResolver;
export const { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } = loadPeer<typeof A2AServer>(A2A_ENTRY_POINT, '@a2a-js/sdk/server');
export type DefaultRequestHandler = A2AServer.DefaultRequestHandler;
export type InMemoryTaskStore = A2AServer.InMemoryTaskStore;
