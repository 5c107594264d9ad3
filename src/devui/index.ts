export { startDevUI, type DevUI, type DevUIOptions, type ThreadSummary } from './devui-server.js';
export { ThreadIndex, type ThreadIndexEntry } from './thread-index.js';
