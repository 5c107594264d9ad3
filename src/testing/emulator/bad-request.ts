import { isRecord, type Json } from './run-simulator.js';

/** A request the Assistants emulator refuses: its status and, when one field is at fault, that field. */
export class BadRequest extends Error {
  constructor(
    message: string,
    readonly status = 400,
    readonly param?: string,
  ) {
    super(message);
  }
}

export function checkTools(tools: unknown): void {
  if (!Array.isArray(tools)) throw new BadRequest('`tools` must be an array.', 400, 'tools');
  tools.forEach((t, i) => {
    if (!isRecord(t) || !['function', 'code_interpreter', 'file_search'].includes(t.type as string)) {
      throw new BadRequest(`tools[${i}].type must be function, code_interpreter or file_search.`, 400, `tools[${i}]`);
    }
    if (t.type === 'function' && (!isRecord(t.function) || typeof t.function.name !== 'string')) {
      throw new BadRequest(`tools[${i}] must be {type:"function", function:{name, description?, parameters?}}.`, 400, `tools[${i}]`);
    }
  });
}

/** Metadata as the service takes it: at most 16 pairs, keys up to 64 characters, string values up to 512. */
export function checkMetadata(value: unknown, param: string): void {
  if (value === undefined || value === null) return;
  if (!isRecord(value)) throw new BadRequest(`Invalid '${param}': expected an object of string values.`, 400, param);
  const entries = Object.entries(value);
  if (entries.length > 16) throw new BadRequest(`Invalid '${param}': expected an object with at most 16 properties, but got an object with ${entries.length} properties instead.`, 400, param);
  for (const [key, v] of entries) {
    if (key.length > 64) throw new BadRequest(`Invalid '${param}': metadata keys are at most 64 characters; '${key.slice(0, 20)}...' has ${key.length}.`, 400, param);
    if (typeof v !== 'string') throw new BadRequest(`Invalid '${param}.${key}': expected a string.`, 400, `${param}.${key}`);
    if (v.length > 512) throw new BadRequest(`Invalid '${param}.${key}': string too long. Expected a string with maximum length 512, but got a string with length ${v.length} instead.`, 400, `${param}.${key}`);
  }
}

export function vectorStoreIds(resources: unknown): string[] {
  if (!isRecord(resources) || !isRecord(resources.file_search)) return [];
  const ids = resources.file_search.vector_store_ids;
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
}

export function omit(source: Json, key: string): Json {
  const out = { ...source };
  delete out[key];
  return out;
}

export function pick(source: Json, keys: string[]): Json {
  const out: Json = {};
  for (const k of keys) if (source[k] !== undefined) out[k] = source[k];
  return out;
}

export function record(value: unknown, param: string): Json {
  if (!isRecord(value)) throw new BadRequest(`${param} must be a JSON object.`, 400, param);
  return value;
}

export function arrayOf(value: unknown, param: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new BadRequest(`\`${param}\` must be an array.`, 400, param);
  return value;
}
