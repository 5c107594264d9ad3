import type { AgentRunResponseUpdate } from '../agents/agent-run-response.js';
import { addUsage, type UsageDetails } from '../messages/content.js';
import type { SseWriter } from './devui-http.js';
import type { TurnTraces } from './turn-traces.js';

/** Sends the page what one streamed update holds (text, tool calls and results, approval requests, notices); returns the usage so far. */
export function relayUpdate(sse: Pick<SseWriter, 'send'>, collector: TurnTraces | undefined, runId: string, update: AgentRunResponseUpdate, usage: UsageDetails | undefined): UsageDetails | undefined {
  for (const content of update.contents) {
    switch (content.kind) {
      case 'text':
        if (content.text) sse.send('delta', { text: content.text, role: update.role, authorName: update.authorName });
        break;
      case 'function-call':
        collector?.noteTool(runId, content.callId, { arguments: content.arguments });
        sse.send('tool-call', { callId: content.callId, name: content.name, arguments: content.arguments, authorName: update.authorName });
        break;
      case 'function-result':
        collector?.noteTool(runId, content.callId, { result: content.error !== undefined ? `Error: ${content.error}` : JSON.stringify(content.result ?? null) });
        sse.send('tool-result', { callId: content.callId, result: content.result, error: content.error });
        break;
      case 'hosted-mcp-call':
        // The service made this call on a hosted MCP server: a call and its result, like a local one, naming the server.
        collector?.noteTool(runId, content.callId, { arguments: content.arguments, result: content.error !== undefined ? `Error: ${content.error}` : JSON.stringify(content.result ?? null) });
        sse.send('tool-call', { callId: content.callId, name: content.name, arguments: content.arguments, authorName: update.authorName, hostedServer: content.serverLabel });
        sse.send('tool-result', { callId: content.callId, result: content.result, error: content.error });
        break;
      case 'function-approval-request':
        sse.send('approval-request', { callId: content.callId, name: content.name, arguments: content.arguments });
        break;
      case 'usage':
        usage = addUsage(usage, content.usage);
        break;
      case 'error':
        sse.send('notice', { message: content.message });
        break;
      default:
        break;
    }
  }
  return usage;
}
