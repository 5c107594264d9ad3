import type { JsonPatchOperation } from '@ag-ui/core';

/**
 * The JSON Patch (RFC 6902) that turns `from` into `to`: objects are compared key by key
 * (`add`, `remove`, `replace`); arrays and other values that differ are replaced whole, which
 * keeps patches correct and short for the state shapes front ends use.
 */
export function jsonDiff(from: unknown, to: unknown, path = ''): JsonPatchOperation[] {
  if (sameJson(from, to)) return [];
  if (!isObject(from) || !isObject(to)) return [{ op: 'replace', path, value: to }];
  const ops: JsonPatchOperation[] = [];
  for (const key of Object.keys(from)) {
    if (!(key in to)) ops.push({ op: 'remove', path: `${path}/${escape(key)}` });
  }
  for (const [key, value] of Object.entries(to)) {
    const child = `${path}/${escape(key)}`;
    if (!(key in from)) ops.push({ op: 'add', path: child, value });
    else ops.push(...jsonDiff(from[key], value, child));
  }
  return ops;
}

export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b) && Array.isArray(a) === Array.isArray(b);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 6901: `~` -> `~0`, `/` -> `~1`. */
function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
