import type { IdGenerator } from './id-generator.js';
import { InvalidRequestError, isRecord } from './invalid-request-error.js';
import type { StoredItem } from './stored-item.js';

/** `input` (a string or items) as stored items with ids, validated. */
export function parseInput(input: unknown, ids: IdGenerator, param = 'input'): StoredItem[] {
  if (typeof input === 'string') return [userMessage(input, ids)];
  if (!Array.isArray(input)) throw new InvalidRequestError(`\`${param}\` must be a string or an array of items.`, param);
  return input.map((item, index) => parseItem(item, ids, `${param}[${index}]`));
}

function userMessage(text: string, ids: IdGenerator): StoredItem {
  return { id: ids.next('msg_'), type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text }] };
}

function parseItem(item: unknown, ids: IdGenerator, param: string): StoredItem {
  if (!isRecord(item)) throw new InvalidRequestError(`${param} must be an object.`, param);
  const type = item.type ?? 'message';
  switch (type) {
    case 'message': {
      const role = item.role;
      if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer') {
        throw new InvalidRequestError(`${param}.role must be one of user, assistant, system, developer; got ${JSON.stringify(role)}.`, `${param}.role`);
      }
      const partType = role === 'assistant' ? 'output_text' : 'input_text';
      let content: unknown[];
      if (typeof item.content === 'string') content = [{ type: partType, text: item.content, ...(role === 'assistant' ? { annotations: [] } : {}) }];
      else if (Array.isArray(item.content)) content = item.content;
      else throw new InvalidRequestError(`${param}.content must be a string or an array of parts.`, `${param}.content`);
      return { id: typeof item.id === 'string' ? item.id : ids.next('msg_'), type: 'message', role, status: 'completed', content };
    }
    case 'function_call':
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string' || typeof item.arguments !== 'string') {
        throw new InvalidRequestError(`${param}: a function_call needs call_id, name and arguments (strings).`, param);
      }
      return {
        id: typeof item.id === 'string' ? item.id : ids.next('fc_'),
        type: 'function_call',
        status: 'completed',
        call_id: item.call_id,
        name: item.name,
        arguments: item.arguments,
      };
    case 'function_call_output':
      if (typeof item.call_id !== 'string' || (typeof item.output !== 'string' && !Array.isArray(item.output))) {
        throw new InvalidRequestError(`${param}: a function_call_output needs call_id and output.`, param);
      }
      return { id: ids.next('fco_'), type: 'function_call_output', status: 'completed', call_id: item.call_id, output: item.output };
    case 'mcp_approval_request':
      if (typeof item.id !== 'string' || typeof item.server_label !== 'string' || typeof item.name !== 'string' || typeof item.arguments !== 'string') {
        throw new InvalidRequestError(`${param}: an mcp_approval_request needs id, server_label, name and arguments (strings).`, param);
      }
      return { id: item.id, type: 'mcp_approval_request', server_label: item.server_label, name: item.name, arguments: item.arguments };
    case 'mcp_approval_response':
      if (typeof item.approval_request_id !== 'string' || typeof item.approve !== 'boolean') {
        throw new InvalidRequestError(`${param}: an mcp_approval_response needs approval_request_id (string) and approve (boolean).`, param);
      }
      return {
        id: typeof item.id === 'string' ? item.id : ids.next('mcpa_'),
        type: 'mcp_approval_response',
        approval_request_id: item.approval_request_id,
        approve: item.approve,
        ...(typeof item.reason === 'string' ? { reason: item.reason } : {}),
      };
    case 'mcp_list_tools':
      // Sent back by a client that keeps its own history (store: false): the service need not list again.
      if (typeof item.id !== 'string' || typeof item.server_label !== 'string' || !Array.isArray(item.tools)) {
        throw new InvalidRequestError(`${param}: an mcp_list_tools needs id, server_label (strings) and tools (an array).`, param);
      }
      item.tools.forEach((tool, index) => {
        if (!isRecord(tool) || typeof tool.name !== 'string' || !isRecord(tool.input_schema)) {
          throw new InvalidRequestError(`${param}.tools[${index}] needs name (a string) and input_schema (an object).`, `${param}.tools[${index}]`);
        }
      });
      return { id: item.id, type: 'mcp_list_tools', server_label: item.server_label, tools: item.tools, error: typeof item.error === 'string' ? item.error : null };
    case 'mcp_call':
      if (typeof item.id !== 'string' || typeof item.server_label !== 'string' || typeof item.name !== 'string' || typeof item.arguments !== 'string') {
        throw new InvalidRequestError(`${param}: an mcp_call needs id, server_label, name and arguments (strings).`, param);
      }
      for (const key of ['output', 'error', 'approval_request_id'] as const) {
        if (item[key] !== undefined && item[key] !== null && typeof item[key] !== 'string') {
          throw new InvalidRequestError(`${param}.${key} must be a string or null.`, `${param}.${key}`);
        }
      }
      return {
        id: item.id,
        type: 'mcp_call',
        server_label: item.server_label,
        name: item.name,
        arguments: item.arguments,
        output: item.output ?? null,
        error: item.error ?? null,
        status: typeof item.status === 'string' ? item.status : 'completed',
        ...(typeof item.approval_request_id === 'string' ? { approval_request_id: item.approval_request_id } : {}),
      };
    case 'item_reference':
      if (typeof item.id !== 'string') throw new InvalidRequestError(`${param}: an item_reference needs the id of a stored item.`, `${param}.id`);
      // Resolved against the stored items by resolveItemReferences once the state is at hand.
      return { id: item.id, type: 'item_reference', param };
    default:
      throw new InvalidRequestError(`${param}.type ${JSON.stringify(type)} is not supported by the emulator.`, `${param}.type`);
  }
}
