export * from './json-file-chat-message-store.js';
export * from './json-file-store-plugin.js';
