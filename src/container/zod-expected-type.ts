import type { ConfigPath, ExpectedType } from './env-substitution.js';

/** The part of a zod 4 schema this file reads (`schema._zod.def`); anything else counts as unknown. */
interface ZodLike {
  _zod?: { def?: ZodDef };
  isInt?: boolean;
  format?: string | null;
}
interface ZodDef {
  type?: string;
  innerType?: ZodLike;
  in?: ZodLike;
  shape?: Record<string, ZodLike>;
  catchall?: ZodLike;
  valueType?: ZodLike;
  element?: ZodLike;
  items?: ZodLike[];
  options?: ZodLike[];
  left?: ZodLike;
  right?: ZodLike;
  values?: unknown[];
  entries?: Record<string, unknown>;
  getter?: () => ZodLike;
}

// Wrappers whose inner schema decides the type.
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'catch', 'readonly', 'nonoptional', 'success', 'lazy', 'pipe']);
const INTEGER_FORMATS = new Set(['safeint', 'int32', 'uint32', 'int64', 'uint64']);

/**
 * The type a zod (v4) schema expects at `path`, for coercing a `${VAR}` there: `undefined` when the
 * schema says nothing definite (unknown, any, a passthrough key, a schema from another library).
 */
export function expectedTypeInZod(schema: unknown, path: ConfigPath): ExpectedType {
  let node = unwrap(schema as ZodLike);
  for (const key of path) {
    const def = node?._zod?.def;
    if (!def) return undefined;
    node = unwrap(childOf(def, key));
  }
  return leafType(node);
}

function unwrap(node: ZodLike | undefined): ZodLike | undefined {
  for (let i = 0; node && i < 32; i++) {
    const def = node._zod?.def;
    if (!def?.type || !WRAPPERS.has(def.type)) return node;
    node = def.type === 'lazy' ? def.getter?.() : def.type === 'pipe' ? def.in : def.innerType;
  }
  return node;
}

function childOf(def: ZodDef, key: string | number): ZodLike | undefined {
  switch (def.type) {
    case 'object':
      return (typeof key === 'string' && def.shape && Object.hasOwn(def.shape, key) ? def.shape[key] : undefined) ?? def.catchall;
    case 'record':
      return def.valueType;
    case 'array':
      return def.element;
    case 'tuple':
      return typeof key === 'number' ? def.items?.[key] : undefined;
    default:
      return undefined;
  }
}

function leafType(node: ZodLike | undefined): ExpectedType {
  const def = node?._zod?.def;
  switch (def?.type) {
    case 'string':
    case 'enum':
      return enumType(def) ?? 'string';
    case 'number':
      return node!.isInt === true || INTEGER_FORMATS.has(node!.format ?? '') ? 'integer' : 'number';
    case 'boolean':
      return 'boolean';
    case 'literal':
      return typeOfValues(def.values ?? []);
    case 'union':
      return unionType((def.options ?? []).map((o) => leafType(unwrap(o))));
    default:
      return undefined;
  }
}

function enumType(def: ZodDef): ExpectedType {
  return def.type === 'enum' ? typeOfValues(Object.values(def.entries ?? {})) : undefined;
}

function typeOfValues(values: readonly unknown[]): ExpectedType {
  return unionType(values.map((v) => (typeof v === 'string' ? 'string' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v === 'boolean' ? 'boolean' : undefined)));
}

/** A string option wins (the text is already a string); else the one non-string type the options share. */
function unionType(types: readonly ExpectedType[]): ExpectedType {
  if (types.includes('string')) return 'string';
  if (types.includes(undefined)) return undefined;
  const kinds = new Set(types);
  if (kinds.size === 1) return types[0];
  if (kinds.size === 2 && kinds.has('integer') && kinds.has('number')) return 'number';
  return undefined;
}
