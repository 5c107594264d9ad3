/**
 * JSON answers for a `response_format` asking for JSON, built from the model's text reply so
 * the conversation stays observable: `json_object` wraps the reply as `{"answer": ...}`;
 * `json_schema` builds a value that satisfies the schema (every property, required or not;
 * strings carry the reply, numbers the first number of the user's message, booleans true,
 * enums and consts their first value, arrays one item; local `$ref`s resolved).
 */
type Json = Record<string, unknown>;

/** A response format that asks for JSON, or undefined for text. */
export type JsonResponseFormat = { type: 'json_object' } | { type: 'json_schema'; schema: Json };

/** `response_format` of a request -> what it asks for (undefined: text / auto). Throws a message on a malformed one. */
export function readResponseFormat(value: unknown, param: string): JsonResponseFormat | undefined {
  if (value === undefined || value === null || value === 'auto') return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new ResponseFormatError(`Invalid '${param}': expected "auto" or an object with a type.`, param);
  const format = value as Json;
  if (format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type !== 'json_schema') throw new ResponseFormatError(`Invalid '${param}.type': expected one of "text", "json_object", "json_schema", got ${JSON.stringify(format.type)}.`, `${param}.type`);
  const spec = format.json_schema;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new ResponseFormatError(`Missing required parameter: '${param}.json_schema'.`, `${param}.json_schema`);
  const { name, schema } = spec as Json;
  if (typeof name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
    throw new ResponseFormatError(`Invalid '${param}.json_schema.name': expected 1-64 letters, digits, "_" or "-", got ${JSON.stringify(name)}.`, `${param}.json_schema.name`);
  }
  if (schema !== undefined && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
    throw new ResponseFormatError(`Invalid '${param}.json_schema.schema': expected a JSON Schema object.`, `${param}.json_schema.schema`);
  }
  return { type: 'json_schema', schema: (schema as Json | undefined) ?? {} };
}

export class ResponseFormatError extends Error {
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
  }
}

/** The JSON text answering `reply` (the model's text) in `format`. */
export function jsonAnswer(format: JsonResponseFormat, reply: string, userText: string): string {
  if (format.type === 'json_object') return JSON.stringify({ answer: reply });
  const number = Number(/-?\d+(?:\.\d+)?/.exec(userText)?.[0] ?? 0);
  return JSON.stringify(valueFor(format.schema, format.schema, { reply, number }, 0));
}

interface Seeds {
  reply: string;
  number: number;
}

function valueFor(schema: Json, root: Json, seeds: Seeds, depth: number): unknown {
  if (depth > 16) return null;
  const resolved = resolveRef(schema, root);
  if ('const' in resolved) return resolved.const;
  if (Array.isArray(resolved.enum) && resolved.enum.length) return resolved.enum[0];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const options = resolved[key];
    if (Array.isArray(options) && options.length) return valueFor(options[0] as Json, root, seeds, depth + 1);
  }
  const type = Array.isArray(resolved.type) ? (resolved.type.find((t) => t !== 'null') ?? resolved.type[0]) : resolved.type;
  switch (type) {
    case 'string':
      return seeds.reply;
    case 'integer':
      return Math.trunc(seeds.number);
    case 'number':
      return seeds.number;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const items = resolved.items;
      return typeof items === 'object' && items !== null && !Array.isArray(items) ? [valueFor(items as Json, root, seeds, depth + 1)] : [];
    }
    default: {
      const properties = (resolved.properties ?? {}) as Record<string, Json>;
      const out: Json = {};
      for (const [name, property] of Object.entries(properties)) out[name] = valueFor(property, root, seeds, depth + 1);
      return out;
    }
  }
}

function resolveRef(schema: Json, root: Json): Json {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#')) return schema;
  let target: unknown = root;
  for (const part of ref.slice(1).split('/').filter(Boolean)) target = (target as Json | undefined)?.[decodeURIComponent(part.replace(/~1/g, '/').replace(/~0/g, '~'))];
  return typeof target === 'object' && target !== null ? (target as Json) : {};
}
