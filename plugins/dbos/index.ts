import './dbos-peers.js';
export * from './dbos-durable-runner.js';
export * from './dbos-run-steps.js';
export * from './dbos-stream.js';
export * from './dbos-delta-writer.js';
export * from './durable-agent.js';
export * from './dbos-plugin.js';
