import 'reflect-metadata';

export * from './fake-chat-client.js';
