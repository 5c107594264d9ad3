// A ChatMessageStore and the factory that makes and restores it. The factory's contract is declared
// with the serialization contracts it refers to (see restore-contracts.ts).
export * from './chat-message-store-contract.js';
export { ChatMessageStoreFactory, type StoreCreateContext, type StoreRestoreContext } from '../serialization/restore-contracts.js';
