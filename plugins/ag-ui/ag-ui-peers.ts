import type * as Core from '@ag-ui/core';
import type * as CoreSchemas from '@ag-ui/core/schemas';
import type * as Encoder from '@ag-ui/encoder';
import { loadPeer, requirePeers } from 'skein';

// @ag-ui/core and @ag-ui/encoder are optional peers: checked first (one error naming every
// missing one), then loaded at run time. @ag-ui/client is needed by AgUiAgent only and is
// loaded on its first run (see ag-ui-agent.ts).
export const AG_UI_ENTRY_POINT = 'skein/ag-ui';
requirePeers(AG_UI_ENTRY_POINT, ['@ag-ui/core', '@ag-ui/encoder']);

export const { EventType } = loadPeer<typeof Core>(AG_UI_ENTRY_POINT, '@ag-ui/core');
export type EventType = Core.EventType;
export const { RunAgentInputSchema, MessageSchema } = loadPeer<typeof CoreSchemas>(AG_UI_ENTRY_POINT, '@ag-ui/core/schemas');
export const { EventEncoder } = loadPeer<typeof Encoder>(AG_UI_ENTRY_POINT, '@ag-ui/encoder');
export type EventEncoder = Encoder.EventEncoder;
