import { SerializationError } from '../errors/skein-error.js';
import { isPlainObject } from './json.js';

/** Bounds applied to untrusted serialized input before anything reads it. */
export interface SerializationLimits {
  /** Deepest nesting of objects and arrays. */
  maxDepth: number;
  /** Most values (objects, arrays, strings, numbers, ...) in one input. */
  maxNodes: number;
  /** Longest string, in UTF-16 code units. */
  maxStringLength: number;
}

export const DEFAULT_SERIALIZATION_LIMITS: SerializationLimits = {
  maxDepth: 64,
  maxNodes: 5_000_000,
  maxStringLength: 16 * 1024 * 1024,
};

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Checks that `input` is plain JSON data within `limits`: only plain objects, arrays, strings,
 * finite numbers, booleans and null; no `__proto__` / `constructor` / `prototype` keys. Iterative,
 * so a deeply nested input cannot overflow the stack. Throws SerializationError naming the path.
 */
export function assertUntrustedJson(input: unknown, limits: SerializationLimits, rootPath = '$'): void {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: input, path: rootPath, depth: 0 }];
  let nodes = 0;
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (++nodes > limits.maxNodes) {
      throw new SerializationError(rootPath, `input has more than ${limits.maxNodes} values; raise limits.maxNodes if this is expected.`);
    }
    switch (typeof value) {
      case 'string':
        if (value.length > limits.maxStringLength) {
          throw new SerializationError(path, `string of ${value.length} characters exceeds limits.maxStringLength (${limits.maxStringLength}).`);
        }
        continue;
      case 'boolean':
        continue;
      case 'number':
        if (!Number.isFinite(value)) throw new SerializationError(path, `expected a finite number, found ${value}.`);
        continue;
      case 'object':
        break;
      default:
        throw new SerializationError(path, `expected JSON data, found ${typeof value}.`);
    }
    if (value === null) continue;
    if (depth >= limits.maxDepth) {
      throw new SerializationError(path, `nesting deeper than limits.maxDepth (${limits.maxDepth}).`);
    }
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) stack.push({ value: value[i], path: `${path}[${i}]`, depth: depth + 1 });
      continue;
    }
    if (!isPlainObject(value)) {
      throw new SerializationError(path, `expected a plain JSON object, found an instance of ${describeClass(value)}.`);
    }
    for (const key of Object.keys(value)) {
      if (FORBIDDEN_KEYS.has(key)) {
        throw new SerializationError(`${path}.${key}`, `the key "${key}" is not allowed in serialized state (prototype pollution guard).`);
      }
      stack.push({ value: value[key], path: `${path}.${key}`, depth: depth + 1 });
    }
  }
}

function describeClass(value: object): string {
  const ctor = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor;
  return ctor?.name || 'an unknown class';
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
