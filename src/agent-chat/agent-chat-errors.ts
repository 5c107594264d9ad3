import { SkeinError } from '../errors/skein-error.js';

/** A group chat was asked to invoke (or take messages) while an invocation is running. */
export class ChatBusyError extends SkeinError {}

/** No channel provider supports an agent, or two agents in one chat share a name. */
export class AgentChatConfigurationError extends SkeinError {}
