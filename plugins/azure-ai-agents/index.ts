import 'reflect-metadata';
// First: without its optional peers (@azure/ai-agents and companions) this entry point is a ConfigurationError naming them.
import './azure-peers.js';

export * from './azure-ai-agents-chat-client.js';
export * from './azure-ai-agent.js';
export * from './azure-ai-agents-errors.js';
export * from './azure-ai-agents-plugin.js';
export * from './emulator-connection.js';
export * from './foundry-channel.js';
export * from './foundry-message-content.js';
