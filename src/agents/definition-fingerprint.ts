import { createHash } from 'node:crypto';

/**
 * A short, stable fingerprint of an agent definition (any JSON-like value): the same definition
 * gives the same fingerprint in every process, whatever the key order of its objects. Service
 * plugins (Assistants, Foundry) keep it in the service agent's metadata to find the agent a
 * definition already created instead of creating one per process, and to see when it changed.
 */
export function definitionFingerprint(definition: unknown): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex').slice(0, 32);
}

/** JSON with object keys sorted at every level and `undefined` members left out. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined && typeof member !== 'function')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(',')}}`;
}
