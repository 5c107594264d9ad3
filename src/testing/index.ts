import 'reflect-metadata';

export * from './fake-chat-client.js';
export * from './emulator/index.js';
export * from './store-conformance/index.js';
