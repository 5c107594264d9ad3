// Declared with the contracts it refers to (see restore-contracts.ts).
export { ThreadSerializer, type ThreadReadContext } from './restore-contracts.js';
