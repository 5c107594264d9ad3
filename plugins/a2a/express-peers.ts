import type * as A2AExpress from '@a2a-js/sdk/server/express';
import type Express from 'express';
import { loadPeer } from 'skein';
import { A2A_ENTRY_POINT } from './a2a-peers.js';

// express and the SDK's express handlers, loaded at run time (see a2a-peers.ts). Only
// a2a-server.ts uses them, and its declarations name none of their types: express's types are
// not a dependency of an app that installs skein.
export const express = loadPeer<{ default: typeof Express }>(A2A_ENTRY_POINT, 'express').default;
export const { UserBuilder, agentCardHandler, jsonRpcHandler } = loadPeer<typeof A2AExpress>(A2A_ENTRY_POINT, '@a2a-js/sdk/server/express');
