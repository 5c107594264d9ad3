import type * as IORedis from 'ioredis';
import { loadPeer } from 'skein';

// ioredis is an optional peer: loaded here, at run time, rather than linked statically, so
// importing skein/store-redis without it is a ConfigurationError naming it (see `loadPeer`).
export const { Redis } = loadPeer<typeof IORedis>('skein/store-redis', 'ioredis');
export type Redis = IORedis.Redis;
