import 'reflect-metadata';
// The store module's first import is './postgres-peers.js': without its optional peer (pg) this
// entry point is a ConfigurationError naming it. (Not imported here for its side effect: the
// declarations would then reach pg's types, which pg does not ship.)

export * from './postgres-chat-message-store.js';
export * from './postgres-store-plugin.js';
