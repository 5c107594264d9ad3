export * from './openai-assistant-agent.js';
export * from './openai-assistant-agent-factory.js';
export * from './openai-assistant-definition.js';
export * from './openai-assistant-errors.js';
export * from './openai-assistant-files.js';
export * from './openai-service-configuration.js';
export * from './openai-assistant-channel.js';
