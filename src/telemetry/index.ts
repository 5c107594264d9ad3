// First: without its optional peer (@opentelemetry/api) this entry point is a ConfigurationError naming it.
import './opentelemetry-api.js';
export * from './gen-ai-attributes.js';
export * from './gen-ai-messages.js';
export * from './telemetry-middleware.js';
export * from './telemetry-plugin.js';
