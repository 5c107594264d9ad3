import type * as Pg from 'pg';
import { loadPeer } from 'skein';

// pg is an optional peer: loaded here, at run time, rather than linked statically, so importing
// skein/store-postgres without it is a ConfigurationError naming it (see `loadPeer`).
export const pg = loadPeer<{ default: typeof Pg }>('skein/store-postgres', 'pg').default;
