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

/** A container on the walk's stack; its path is built only when an error needs it. */
interface Frame {
  value: object;
  depth: number;
  parent: Frame | undefined;
  key: string | number;
}

function pathOf(rootPath: string, frame: Frame | undefined, key?: string | number): string {
  const keys: (string | number)[] = key === undefined ? [] : [key];
  for (let f = frame; f?.parent; f = f.parent) keys.push(f.key);
  let path = rootPath;
  for (let i = keys.length - 1; i >= 0; i--) path += typeof keys[i] === 'number' ? `[${keys[i]}]` : `.${keys[i]}`;
  return path;
}

/**
 * Checks that `input` is plain JSON data within `limits`: only plain objects, arrays, strings,
 * finite numbers, booleans and null; no `__proto__` / `constructor` / `prototype` keys. Iterative,
 * so a deeply nested input cannot overflow the stack. Throws SerializationError naming the path.
 * Leaves are checked in place and paths are built only for errors: most values are leaves, and
 * a string per value made this walk the bulk of reading a long thread.
 */
export function assertUntrustedJson(input: unknown, limits: SerializationLimits, rootPath = '$'): void {
  let nodes = 1;
  if (!checkValue(input, limits, rootPath, undefined, undefined)) return;
  const stack: Frame[] = [{ value: input as object, depth: 0, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { value, depth } = frame;
    if (depth >= limits.maxDepth) {
      throw new SerializationError(pathOf(rootPath, frame), `nesting deeper than limits.maxDepth (${limits.maxDepth}).`);
    }
    if (Array.isArray(value)) {
      nodes += value.length;
      if (nodes > limits.maxNodes) throw tooMany(rootPath, limits);
      for (let i = 0; i < value.length; i++) {
        const child: unknown = value[i];
        if (checkValue(child, limits, rootPath, frame, i)) stack.push({ value: child as object, depth: depth + 1, parent: frame, key: i });
      }
      continue;
    }
    if (!isPlainObject(value)) {
      throw new SerializationError(pathOf(rootPath, frame), `expected a plain JSON object, found an instance of ${describeClass(value)}.`);
    }
    const keys = Object.keys(value);
    nodes += keys.length;
    if (nodes > limits.maxNodes) throw tooMany(rootPath, limits);
    for (const key of keys) {
      if (FORBIDDEN_KEYS.has(key)) {
        throw new SerializationError(pathOf(rootPath, frame, key), `the key "${key}" is not allowed in serialized state (prototype pollution guard).`);
      }
      const child = value[key];
      if (checkValue(child, limits, rootPath, frame, key)) stack.push({ value: child as object, depth: depth + 1, parent: frame, key });
    }
  }
}

function tooMany(rootPath: string, limits: SerializationLimits): SerializationError {
  return new SerializationError(rootPath, `input has more than ${limits.maxNodes} values; raise limits.maxNodes if this is expected.`);
}

/** Checks a leaf; returns true for a non-null object or array, which the caller walks. */
function checkValue(value: unknown, limits: SerializationLimits, rootPath: string, parent: Frame | undefined, key: string | number | undefined): boolean {
  switch (typeof value) {
    case 'string':
      if (value.length > limits.maxStringLength) {
        throw new SerializationError(
          pathOf(rootPath, parent, key),
          `string of ${value.length} characters exceeds limits.maxStringLength (${limits.maxStringLength}).`,
        );
      }
      return false;
    case 'boolean':
      return false;
    case 'number':
      if (!Number.isFinite(value)) throw new SerializationError(pathOf(rootPath, parent, key), `expected a finite number, found ${value}.`);
      return false;
    case 'object':
      return value !== null;
    default:
      throw new SerializationError(pathOf(rootPath, parent, key), `expected JSON data, found ${typeof value}.`);
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
