import 'reflect-metadata';

export * from './azure-ai-agents-chat-client.js';
export * from './azure-ai-agent.js';
export * from './azure-ai-agents-errors.js';
export * from './azure-ai-agents-plugin.js';
export * from './emulator-connection.js';
export * from './foundry-channel.js';
export * from './foundry-message-content.js';
