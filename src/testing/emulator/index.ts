export { Emulator, type EmulatorOptions, type RecordedRequest } from './emulator.js';
export {
  EmulatedModel,
  isToolCallsReply,
  toolNameWords,
  type ModelMessage,
  type ModelReply,
  type ModelRole,
  type ModelTextReply,
  type ModelTool,
  type ModelToolCall,
  type ModelToolCallsReply,
} from './emulated-model.js';
export { FaultQueue, type Fault } from './fault.js';
export {
  SseStream,
  errorEnvelope,
  sendError,
  sendJson,
  sendRawJson,
  type ErrorDetails,
  type ErrorEnvelope,
  type SseStreamOptions,
  type StreamSabotage,
} from './http-replies.js';
export { IdGenerator } from './id-generator.js';
export {
  Router,
  type RouteContext,
  type RouteHandler,
  type RouteMatch,
  type RouteRegistry,
  type RouteReply,
  type RouteRequest,
} from './router.js';
export { registerChatCompletionsRoutes } from './chat-completions-routes.js';
export { AssistantsState, registerAssistantsRoutes, type AssistantsRoutesOptions, type EmulatedRun } from './assistants-routes.js';
export {
  registerResponsesRoutes,
  RESPONSES_INPUT_ITEMS_LISTINGS,
  type ResponsesInputItemsListing,
  type ResponsesRoutesOptions,
  ResponsesState,
  responsesStateOf,
} from './responses-routes.js';
export { registerConversationsRoutes } from './conversations-routes.js';
export { FOUNDRY_DEFAULT_PROJECT, FOUNDRY_PROJECT_PREFIX, foundryProjectEndpoint, registerFoundryRoutes } from './foundry-routes.js';
export {
  FilesState,
  registerFilesRoutes,
  searchFiles,
  searchFileHits,
  type EmulatedFile,
  type EmulatedFileBatch,
  type EmulatedVectorStore,
  type FileSearchHit,
  type FilesRoutesOptions,
} from './files-routes.js';
export { readMultipart, type MultipartResult, type MultipartValue } from './multipart.js';
