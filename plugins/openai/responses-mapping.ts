import type OpenAI from 'openai';
import {
  type AIContent,
  type ChatMessage,
  type ChatOptions,
  type ChatResponse,
  type FinishReason,
  type FunctionCallContent,
  type HostedMcpCallContent,
  type HostedMcpTool,
  type HostedMcpToolsContent,
  type JsonValue,
  ServiceError,
  type UsageDetails,
  functionResultText,
  withAttribution,
} from 'skein';

import { HOSTED_MCP_OPTION, hostedMcpTools } from './hosted-mcp.js';

type InputItem = OpenAI.Responses.ResponseInputItem;
type InputContent = OpenAI.Responses.ResponseInputContent;

/** Where a hosted MCP approval request keeps its server's label (it marks the request as the service's). */
export const MCP_SERVER_LABEL = 'mcpServerLabel';

/** Where a hosted MCP call keeps the service's `status` for the item (sent back as it came). */
export const RESPONSES_STATUS = 'status';

/** Where a function call's Responses item id (`fc_...`) is kept, so it round-trips through threads. */
export const RESPONSES_ITEM_ID = 'itemId';

/**
 * Skein messages -> Responses input items. Assistant text becomes an assistant message item,
 * each function call a `function_call` item (with its `fc_` id when known), each function
 * result a `function_call_output` item.
 */
export function toResponsesInput(messages: readonly ChatMessage[]): InputItem[] {
  const items: InputItem[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        items.push({ type: 'message', role: 'system', content: textOf(message.contents) });
        break;
      case 'user': {
        // Answers to the service's hosted-tool approval requests are items of their own.
        const answers = message.contents.filter((c) => c.kind === 'function-approval-response');
        for (const a of answers) items.push({ type: 'mcp_approval_response', approval_request_id: a.callId, approve: a.approved, ...(a.reason ? { reason: a.reason } : {}) });
        if (answers.length === message.contents.length) break;
        const said = answers.length ? { ...message, contents: message.contents.filter((c) => c.kind !== 'function-approval-response') } : message;
        // Input messages have no `name`: a named author is said in the text (`[writer]: ...`).
        items.push({ type: 'message', role: 'user', content: userContent(withAttribution(said).contents) });
        break;
      }
      case 'assistant':
        items.push(...assistantItems(message.contents));
        break;
      case 'tool':
        for (const c of message.contents) {
          if (c.kind === 'function-result') items.push({ type: 'function_call_output', call_id: c.callId, output: functionResultText(c) });
        }
        break;
    }
  }
  return items;
}

function textOf(contents: readonly AIContent[]): string {
  let text = '';
  for (const c of contents) if (c.kind === 'text') text += c.text;
  return text;
}

function userContent(contents: readonly AIContent[]): string | InputContent[] {
  if (contents.every((c) => c.kind === 'text')) return textOf(contents);
  const parts: InputContent[] = [];
  for (const c of contents) {
    if (c.kind === 'text') parts.push({ type: 'input_text', text: c.text });
    else if (c.kind === 'data' && c.mediaType.startsWith('image/')) parts.push({ type: 'input_image', detail: 'auto', image_url: `data:${c.mediaType};base64,${c.data}` });
    else if (c.kind === 'uri') parts.push({ type: 'input_image', detail: 'auto', image_url: c.uri });
  }
  return parts;
}

/** In content order: runs of text become one assistant message, calls their own items. */
function assistantItems(contents: readonly AIContent[]): InputItem[] {
  const items: InputItem[] = [];
  let text = '';
  const flush = () => {
    if (text) items.push({ type: 'message', role: 'assistant', content: text });
    text = '';
  };
  for (const c of contents) {
    if (c.kind === 'text') text += c.text;
    else if (c.kind === 'function-call') {
      flush();
      const itemId = c.additionalProperties?.[RESPONSES_ITEM_ID];
      items.push({
        type: 'function_call',
        call_id: c.callId,
        name: c.name,
        arguments: c.arguments,
        ...(typeof itemId === 'string' ? { id: itemId } : {}),
      });
    } else if (c.kind === 'function-approval-request') {
      const serverLabel = c.additionalProperties?.[MCP_SERVER_LABEL];
      if (typeof serverLabel !== 'string') continue;
      flush();
      // Sent back (store: false) so the service knows the request the answer is for.
      items.push({ type: 'mcp_approval_request', id: c.callId, server_label: serverLabel, name: c.name, arguments: c.arguments });
    } else if (c.kind === 'hosted-mcp-tools') {
      // Sent back (store: false) so the service knows the server's tools without listing them again.
      flush();
      items.push(mcpListToolsItem(c));
    } else if (c.kind === 'hosted-mcp-call') {
      // Sent back (store: false) so the model sees the call and its output, as on a service thread.
      flush();
      items.push(mcpCallItem(c));
    }
  }
  flush();
  return items;
}

/** A kept `mcp_list_tools` item, as the service returned it (ids included). */
export function mcpListToolsItem(c: HostedMcpToolsContent): OpenAI.Responses.ResponseInputItem.McpListTools {
  return {
    type: 'mcp_list_tools',
    id: c.listId,
    server_label: c.serverLabel,
    tools: c.tools.map((t) => ({ name: t.name, description: t.description ?? null, input_schema: t.inputSchema, annotations: t.annotations ?? null })),
    error: c.error ?? null,
  };
}

/** A kept `mcp_call` item, as the service returned it (ids included). */
export function mcpCallItem(c: HostedMcpCallContent): OpenAI.Responses.ResponseInputItem.McpCall {
  const status = c.additionalProperties?.[RESPONSES_STATUS];
  return {
    type: 'mcp_call',
    id: c.callId,
    server_label: c.serverLabel,
    name: c.name,
    arguments: c.arguments,
    output: c.result ?? null,
    error: c.error ?? null,
    ...(typeof status === 'string' ? { status: status as OpenAI.Responses.ResponseInputItem.McpCall['status'] } : {}),
    ...(c.approvalRequestId !== undefined ? { approval_request_id: c.approvalRequestId } : {}),
  };
}

/** An `mcp_call` output item as Skein content: the call, its output or error, and what it answered. */
export function hostedMcpCallFrom(item: OpenAI.Responses.ResponseOutputItem.McpCall): HostedMcpCallContent {
  const call: HostedMcpCallContent = { kind: 'hosted-mcp-call', callId: item.id, serverLabel: item.server_label, name: item.name, arguments: item.arguments };
  if (item.output != null) call.result = item.output;
  if (item.error != null) call.error = item.error;
  if (item.approval_request_id != null) call.approvalRequestId = item.approval_request_id;
  if (item.status) call.additionalProperties = { [RESPONSES_STATUS]: item.status };
  return call;
}

/** An `mcp_list_tools` output item as Skein content. */
export function hostedMcpToolsFrom(item: OpenAI.Responses.ResponseOutputItem.McpListTools): HostedMcpToolsContent {
  const tools = item.tools.map((t): HostedMcpTool => {
    const tool: HostedMcpTool = { name: t.name, inputSchema: (t.input_schema ?? {}) as JsonValue };
    if (t.description != null) tool.description = t.description;
    if (t.annotations != null) tool.annotations = t.annotations as JsonValue;
    return tool;
  });
  const listing: HostedMcpToolsContent = { kind: 'hosted-mcp-tools', listId: item.id, serverLabel: item.server_label, tools };
  if (item.error != null) listing.error = item.error;
  return listing;
}

/** The agent's function tools, then its hosted MCP servers (the `hostedMcp` option) as `mcp` tools. */
export function toResponsesTools(options: ChatOptions): OpenAI.Responses.Tool[] | undefined {
  const functions: OpenAI.Responses.Tool[] = (options.tools ?? []).map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters, strict: false }));
  const tools = [...functions, ...hostedMcpTools(options.additionalProperties?.[HOSTED_MCP_OPTION])];
  return tools.length ? tools : undefined;
}

export function responsesUsage(usage: OpenAI.Responses.ResponseUsage | null | undefined): UsageDetails | undefined {
  if (!usage) return undefined;
  return { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens, totalTokens: usage.total_tokens };
}

export function functionCallFrom(item: OpenAI.Responses.ResponseFunctionToolCall): FunctionCallContent {
  const call: FunctionCallContent = { kind: 'function-call', callId: item.call_id, name: item.name, arguments: item.arguments };
  if (item.id) call.additionalProperties = { [RESPONSES_ITEM_ID]: item.id };
  return call;
}

/**
 * The contents of one output item: text and refusals of a message, a function call, or what a
 * hosted MCP server did (its tool listing, a call, an approval request).
 */
export function contentsOfItem(item: OpenAI.Responses.ResponseOutputItem): AIContent[] {
  if (item.type === 'function_call') return [functionCallFrom(item)];
  if (item.type === 'mcp_approval_request') {
    // The service asks before it calls a hosted MCP tool: a Skein approval request the agent surfaces.
    return [{ kind: 'function-approval-request', callId: item.id, name: item.name, arguments: item.arguments, additionalProperties: { [MCP_SERVER_LABEL]: item.server_label } }];
  }
  if (item.type === 'mcp_call') return [hostedMcpCallFrom(item)];
  if (item.type === 'mcp_list_tools') return [hostedMcpToolsFrom(item)];
  if (item.type !== 'message') return [];
  const contents: AIContent[] = [];
  for (const part of item.content) {
    if (part.type === 'output_text') contents.push({ kind: 'text', text: part.text });
    else if (part.type === 'refusal') contents.push({ kind: 'error', message: part.refusal, code: 'refusal' });
  }
  return contents;
}

export function finishReasonOf(response: OpenAI.Responses.Response): FinishReason {
  if (response.status === 'incomplete') {
    const reason = response.incomplete_details?.reason;
    return reason === 'max_output_tokens' ? 'length' : reason === 'content_filter' ? 'content_filter' : 'incomplete';
  }
  return response.output.some((item) => item.type === 'function_call') ? 'tool_calls' : 'stop';
}

/**
 * The id to continue from: the conversation when the response is in one, else the response
 * itself (for `previous_response_id`); none when the service did not store it.
 */
export function continuationIdOf(response: OpenAI.Responses.Response): string | undefined {
  // `store` is on the wire but not in the SDK's Response type.
  if ((response as { store?: boolean }).store === false) return undefined;
  return response.conversation?.id ?? response.id;
}

/** One assistant message (id = the response id) with every output item's content, in order. */
export function fromResponse(provider: string, response: OpenAI.Responses.Response): ChatResponse {
  if (response.status === 'failed') {
    throw new ServiceError(provider, `${provider} response ${response.id} failed: ${response.error?.message ?? 'no reason given'}`);
  }
  const contents = response.output.flatMap(contentsOfItem);
  const result: ChatResponse = {
    messages: contents.length ? [{ role: 'assistant', contents, messageId: response.id }] : [],
    responseId: response.id,
    modelId: response.model,
    finishReason: finishReasonOf(response),
  };
  const conversationId = continuationIdOf(response);
  if (conversationId) result.conversationId = conversationId;
  const usage = responsesUsage(response.usage);
  if (usage) result.usage = usage;
  return result;
}
