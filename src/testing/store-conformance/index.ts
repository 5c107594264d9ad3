export * from './chat-message-store-conformance.js';
