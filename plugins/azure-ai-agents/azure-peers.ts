import type * as AzureAIAgents from '@azure/ai-agents';
import type * as CoreRestPipeline from '@azure/core-rest-pipeline';
import { loadPeer, requirePeers } from 'skein';

// @azure/ai-agents and its companions are optional peers: checked first (one error naming every
// missing one), then loaded at run time rather than linked statically (see `loadPeer`).
const ENTRY_POINT = 'skein/azure-ai-agents';
requirePeers(ENTRY_POINT, ['@azure/ai-agents', '@azure/core-auth', '@azure/core-rest-pipeline']);

export const { AgentsClient } = loadPeer<typeof AzureAIAgents>(ENTRY_POINT, '@azure/ai-agents');
export type AgentsClient = AzureAIAgents.AgentsClient;
export const { bearerTokenAuthenticationPolicyName, createDefaultHttpClient, isRestError } = loadPeer<typeof CoreRestPipeline>(ENTRY_POINT, '@azure/core-rest-pipeline');
