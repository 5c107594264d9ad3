import 'reflect-metadata';

export * from './fake-chat-client.js';
export * from './emulator/index.js';
