import 'reflect-metadata';
// First: without its optional peer (pg) this entry point is a ConfigurationError naming it.
import './postgres-peers.js';

export * from './postgres-chat-message-store.js';
export * from './postgres-store-plugin.js';
