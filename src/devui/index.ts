export { startDevUI, type ApprovalAnswer, type DevUI, type DevUIOptions, type LoadOutcome, type PendingApproval, type ThreadSummary } from './devui-server.js';
export { ThreadIndex, type ThreadIndexEntry } from './thread-index.js';
