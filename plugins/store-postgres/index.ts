import 'reflect-metadata';

export * from './postgres-chat-message-store.js';
export * from './postgres-store-plugin.js';
