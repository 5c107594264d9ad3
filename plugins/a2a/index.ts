import 'reflect-metadata';
// First: without its optional peers (@a2a-js/sdk, express) this entry point is a ConfigurationError naming them.
import './a2a-peers.js';

export * from './a2a-agent.js';
export * from './a2a-server.js';
export * from './a2a-context-store.js';
export * from './a2a-errors.js';
export * from './a2a-credentials.js';
export * from './a2a-mapping.js';
export * from './a2a-plugin.js';
export * from './skein-agent-executor.js';
export * from './task-tracker.js';
export * from './a2a-channel.js';
export * from './redis-a2a-context-store.js';
export * from './postgres-a2a-context-store.js';
export * from './postgres-task-store.js';
export * from './leased-task-store.js';
export * from './a2a-database.js';
export * from './a2a-durable.js';
