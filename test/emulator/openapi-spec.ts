import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

/** The pinned OpenAI OpenAPI document (see test/spec/README.md). */
const SPEC_FILE = new URL('../../../test/spec/openai-openapi.json', import.meta.url);
const SPEC_ID = 'openai-openapi';

type Json = Record<string, unknown>;

interface SpecDocument {
  info: { version: string };
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: Json }> }> }>>;
}

/** An operation of the spec: its path template (e.g. `/threads/{thread_id}`) and method. */
export interface SpecOperation {
  method: string;
  template: string;
}

/**
 * Validates bodies against the schemas of the pinned OpenAPI document. Schemas are compiled on
 * first use and cached; the document is added to ajv whole, so every `$ref` resolves in it.
 */
export class OpenApiSpec {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, validateSchema: false });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: { template: string; pattern: RegExp; methods: Set<string> }[];

  constructor(readonly document: SpecDocument = JSON.parse(readFileSync(SPEC_FILE, 'utf8')) as SpecDocument) {
    this.ajv.addSchema(withoutNullable(structuredClone(document)) as unknown as Json, SPEC_ID);
    // Fixed paths first, so `/threads/runs` wins over `/threads/{thread_id}`.
    this.templates = Object.entries(document.paths)
      .filter(([template]) => !template.includes('?'))
      .map(([template, item]) => ({
        template,
        pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
        methods: new Set(Object.keys(item).map((m) => m.toUpperCase())),
      }))
      .sort((a, b) => placeholders(a.template) - placeholders(b.template));
  }

  get version(): string {
    return this.document.info.version;
  }

  /** The operation a request path (without `/v1`) and method hit, or undefined when the spec has none. */
  operation(method: string, path: string): SpecOperation | undefined {
    const found = this.templates.find((t) => t.pattern.test(path) && t.methods.has(method.toUpperCase()));
    return found ? { method: method.toUpperCase(), template: found.template } : undefined;
  }

  /** The operation an emulator route pattern (`/threads/:id`) stands for. */
  operationOfPattern(method: string, pattern: string): SpecOperation | undefined {
    return this.operation(method, pattern.replace(/:[A-Za-z]+/g, 'x'));
  }

  /**
   * The schema of an operation's reply for a status and content type, as a `$ref`; `'no body'`
   * when the spec documents that status without any content (e.g. DELETE /responses/{id}).
   */
  replySchemaRef(operation: SpecOperation, status: number, contentType: string): string | 'no body' | undefined {
    const responses = this.document.paths[operation.template]?.[operation.method.toLowerCase()]?.responses ?? {};
    const reply = responses[String(status)] ?? responses.default;
    if (reply && reply.content === undefined) return 'no body';
    const schema = reply?.content?.[contentType]?.schema;
    if (!schema) return undefined;
    if (typeof schema.$ref === 'string') return schema.$ref;
    return `#/paths/${pointer(operation.template)}/${operation.method.toLowerCase()}/responses/${status}/content/${pointer(contentType)}/schema`;
  }

  /** Errors of `value` against the schema at `ref` (a `#/...` pointer into the document); empty when valid. */
  validate(ref: string, value: unknown): string[] {
    let validate = this.compiled.get(ref);
    if (!validate) {
      const found = this.ajv.getSchema(`${SPEC_ID}${ref}`);
      if (!found) throw new Error(`The pinned spec has no schema at ${ref}.`);
      validate = found;
      this.compiled.set(ref, validate);
    }
    if (validate(value)) return [];
    return describeErrors(validate.errors ?? []);
  }
}

/**
 * A few schemas of the 3.1 document still say `nullable: true` (OpenAPI 3.0), which JSON Schema
 * 2020-12 does not know (ajv refuses it without a `type`); read it as "or null", in memory only.
 */
function withoutNullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutNullable);
  if (typeof node !== 'object' || node === null) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) if (key !== 'nullable') out[key] = withoutNullable(value);
  if ((node as Json).nullable !== true) return out;
  // OpenAPI 3.0 allowed null even beside an `enum`; JSON Schema needs it listed.
  if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
  if (typeof out.type === 'string') return { ...out, type: [out.type, 'null'] };
  return { anyOf: [out, { type: 'null' }] };
}

function placeholders(template: string): number {
  return (template.match(/\{/g) ?? []).length;
}

/** A JSON pointer segment. */
function pointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The errors worth reading: with `anyOf`/`oneOf` ajv reports every branch, so keep the deepest
 * ones (the branch that came closest) and say where and what was expected.
 */
function describeErrors(errors: readonly ErrorObject[]): string[] {
  const depth = (e: ErrorObject) => e.instancePath.split('/').length;
  const deepest = Math.max(...errors.map(depth));
  const picked = errors.filter((e) => depth(e) === deepest && e.keyword !== 'anyOf' && e.keyword !== 'oneOf');
  const shown = picked.length > 0 ? picked : errors;
  return [...new Set(shown.map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`))].slice(0, 8);
}
