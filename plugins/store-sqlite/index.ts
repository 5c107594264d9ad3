import 'reflect-metadata';

export * from './sqlite-chat-message-store.js';
export * from './sqlite-store-plugin.js';
