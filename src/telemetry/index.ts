export * from './gen-ai-attributes.js';
export * from './gen-ai-messages.js';
export * from './telemetry-middleware.js';
export * from './telemetry-plugin.js';
