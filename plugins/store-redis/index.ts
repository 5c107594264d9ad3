import 'reflect-metadata';
// First: without its optional peer (ioredis) this entry point is a ConfigurationError naming it.
import './redis-peers.js';

export * from './redis-chat-message-store.js';
export * from './redis-store-plugin.js';
