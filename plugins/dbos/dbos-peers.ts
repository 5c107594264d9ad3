import type * as Dbos from '@dbos-inc/dbos-sdk';
import type * as Pg from 'pg';
import { loadPeer, requirePeers } from 'skein';

// DBOS Transact is an optional peer: importing skein/dbos without it fails at once, naming it and
// the npm install line. pg comes with it (DBOS depends on it); the launch lock uses it.
export const DBOS_ENTRY_POINT = 'skein/dbos';
requirePeers(DBOS_ENTRY_POINT, ['@dbos-inc/dbos-sdk', 'pg']);

const sdk = loadPeer<typeof Dbos>(DBOS_ENTRY_POINT, '@dbos-inc/dbos-sdk');
export const { DBOS } = sdk;
export const DbosErrors = sdk.Error;
export type WorkflowStatus = Dbos.WorkflowStatus;
export const pg = loadPeer<{ default: typeof Pg }>(DBOS_ENTRY_POINT, 'pg').default;
