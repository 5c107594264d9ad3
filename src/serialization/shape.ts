import { SerializationError } from '../errors/skein-error.js';
import { isPlainObject } from './json.js';
import { describe } from './untrusted-json.js';

/** Field checks for already-untrusted-checked JSON; each throws SerializationError with the path. */
export type FieldCheck = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'json';

export interface ShapeSpec {
  required?: Record<string, FieldCheck>;
  optional?: Record<string, FieldCheck>;
}

export function expectObject(value: unknown, path: string): Record<string, unknown> {
  if (!isPlainObject(value)) throw new SerializationError(path, `expected an object, found ${describe(value)}.`);
  return value;
}

/** Checks required and optional fields and rejects any other key, so nothing is silently dropped. */
export function checkShape(value: unknown, path: string, spec: ShapeSpec): Record<string, unknown> {
  const obj = expectObject(value, path);
  const required = spec.required ?? {};
  const optional = spec.optional ?? {};
  for (const [key, check] of Object.entries(required)) {
    if (!(key in obj) || obj[key] === undefined) throw new SerializationError(`${path}.${key}`, `required ${check} is missing.`);
    checkField(obj[key], `${path}.${key}`, check);
  }
  for (const key of Object.keys(obj)) {
    if (key in required) continue;
    const check = optional[key];
    if (check === undefined) {
      throw new SerializationError(`${path}.${key}`, `unexpected field; expected one of: ${[...Object.keys(required), ...Object.keys(optional)].join(', ')}.`);
    }
    if (obj[key] !== undefined) checkField(obj[key], `${path}.${key}`, check);
  }
  return obj;
}

function checkField(value: unknown, path: string, check: FieldCheck): void {
  const ok =
    check === 'json' ||
    (check === 'array' ? Array.isArray(value) : check === 'object' ? isPlainObject(value) : typeof value === check);
  if (!ok) throw new SerializationError(path, `expected ${check === 'array' || check === 'object' ? `an ${check}` : `a ${check}`}, found ${describe(value)}.`);
}
