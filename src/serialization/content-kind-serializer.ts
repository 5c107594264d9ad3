import type { AIContent } from '../messages/content.js';
import { SerializationError } from '../errors/skein-error.js';
import { type ShapeSpec, checkShape } from './shape.js';

/**
 * Reads one content kind back from untrusted JSON (already checked to be plain JSON). Plugins
 * contribute one per content kind they add.
 */
export const ContentKindSerializer = Symbol('ContentKindSerializer');
export interface ContentKindSerializer {
  readonly kind: string;
  read(value: Record<string, unknown>, path: string): AIContent;
}

/** A content kind whose JSON is checked field by field against a spec. */
export class ShapeContentKindSerializer implements ContentKindSerializer {
  readonly #spec: ShapeSpec;
  constructor(
    readonly kind: string,
    spec: ShapeSpec,
  ) {
    this.#spec = {
      required: { kind: 'string', ...spec.required },
      optional: { additionalProperties: 'object', ...spec.optional },
    };
  }

  read(value: Record<string, unknown>, path: string): AIContent {
    return checkShape(value, path, this.#spec) as unknown as AIContent;
  }
}

/** `hosted-mcp-tools`: the shape, then each listed tool (a name, an input schema, nothing else unchecked). */
class HostedMcpToolsSerializer extends ShapeContentKindSerializer {
  constructor() {
    super('hosted-mcp-tools', { required: { listId: 'string', serverLabel: 'string', tools: 'array' }, optional: { error: 'string' } });
  }

  override read(value: Record<string, unknown>, path: string): AIContent {
    const content = super.read(value, path);
    (value.tools as unknown[]).forEach((tool, index) => {
      const at = `${path}.tools[${index}]`;
      checkShape(tool, at, { required: { name: 'string', inputSchema: 'json' }, optional: { description: 'string', annotations: 'json' } });
      if ((tool as { inputSchema: unknown }).inputSchema === null) throw new SerializationError(`${at}.inputSchema`, 'expected a JSON Schema, found null.');
    });
    return content;
  }
}

export const CORE_CONTENT_KINDS: readonly ContentKindSerializer[] = [
  new ShapeContentKindSerializer('text', { required: { text: 'string' } }),
  new ShapeContentKindSerializer('data', { required: { data: 'string', mediaType: 'string' } }),
  new ShapeContentKindSerializer('uri', { required: { uri: 'string' }, optional: { mediaType: 'string' } }),
  new ShapeContentKindSerializer('function-call', { required: { callId: 'string', name: 'string', arguments: 'string' } }),
  new ShapeContentKindSerializer('function-result', { required: { callId: 'string' }, optional: { result: 'json', error: 'string' } }),
  new ShapeContentKindSerializer('usage', { required: { usage: 'object' } }),
  new ShapeContentKindSerializer('error', { required: { message: 'string' }, optional: { code: 'string' } }),
  new ShapeContentKindSerializer('reasoning', { required: { text: 'string' } }),
  new ShapeContentKindSerializer('function-approval-request', { required: { callId: 'string', name: 'string', arguments: 'string' } }),
  new ShapeContentKindSerializer('function-approval-response', { required: { callId: 'string', approved: 'boolean' }, optional: { reason: 'string' } }),
  new ShapeContentKindSerializer('hosted-mcp-call', {
    required: { callId: 'string', serverLabel: 'string', name: 'string', arguments: 'string' },
    optional: { result: 'string', error: 'string', approvalRequestId: 'string' },
  }),
  new HostedMcpToolsSerializer(),
];
