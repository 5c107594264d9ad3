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

/**
 * Checks required and optional fields and rejects any other key, so nothing is silently dropped.
 * Paths are built only for errors: this runs once per message and content of every thread read.
 */
export function checkShape(value: unknown, path: string, spec: ShapeSpec): Record<string, unknown> {
  const obj = expectObject(value, path);
  const required = spec.required ?? {};
  const optional = spec.optional ?? {};
  for (const key in required) {
    const check = required[key]!;
    const field = obj[key];
    if (field === undefined) throw new SerializationError(`${path}.${key}`, `required ${check} is missing.`);
    if (!fieldOk(field, check)) throw fieldError(field, `${path}.${key}`, check);
  }
  for (const key of Object.keys(obj)) {
    if (Object.hasOwn(required, key)) continue;
    const check = Object.hasOwn(optional, key) ? optional[key] : undefined;
    if (check === undefined) {
      throw new SerializationError(`${path}.${key}`, `unexpected field; expected one of: ${[...Object.keys(required), ...Object.keys(optional)].join(', ')}.`);
    }
    const field = obj[key];
    if (field !== undefined && !fieldOk(field, check)) throw fieldError(field, `${path}.${key}`, check);
  }
  return obj;
}

function fieldOk(value: unknown, check: FieldCheck): boolean {
  return check === 'json' || (check === 'array' ? Array.isArray(value) : check === 'object' ? isPlainObject(value) : typeof value === check);
}

function fieldError(value: unknown, path: string, check: FieldCheck): SerializationError {
  return new SerializationError(path, `expected ${check === 'array' || check === 'object' ? `an ${check}` : `a ${check}`}, found ${describe(value)}.`);
}
