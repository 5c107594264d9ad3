import { AgentThreadChannelProviderBase, type AIAgent } from 'skein';
import { AG_UI_PROVIDER_ID, AgUiAgent } from './ag-ui-agent.js';

export const AG_UI_CHANNEL_TYPE = 'ag-ui-channel';

/**
 * Group-chat channels for AgUiAgents: one per participant (its endpoint and name), continuing one
 * remote `threadId`. What the others said since its last turn goes to the remote as that many
 * user messages, each with the speaker's `name`, in one run. AG-UI has no call to list a thread,
 * so the channel keeps a transcript of what it sent and received (`getChatMessages`).
 */
export class AgUiChannelProvider extends AgentThreadChannelProviderBase {
  constructor() {
    super(AG_UI_CHANNEL_TYPE, AgUiAgent);
  }

  /** Endpoint and name, never the headers (they may hold credentials): two participants on one endpoint keep two remote threads. */
  channelKey(agent: AIAgent): string {
    return `${AG_UI_PROVIDER_ID}:${(agent as AgUiAgent).url}#${agent.name ?? ''}`;
  }
}
