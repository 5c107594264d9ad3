import 'reflect-metadata';

export * from './openai-chat-client.js';
export * from './openai-responses-client.js';
export * from './responses-mapping.js';
export * from './hosted-mcp.js';
export * from './openai-plugin.js';
export * from './openai-errors.js';
export * from './chat-completions-mapping.js';
export * from './stream-observable.js';
export * from './assistants/index.js';
export * from './responses-channel.js';
export * from './openai-channel-key.js';
