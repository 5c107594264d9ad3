import 'reflect-metadata';

export * from './redis-chat-message-store.js';
export * from './redis-store-plugin.js';
