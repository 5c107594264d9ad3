import { randomUUID } from 'node:crypto';
import { ChatAgent } from '../agents/chat-agent.js';
import { runToolCall, ToolApprovalRequiredError } from '../agents/tool-approval-gate.js';
import { SkeinError } from '../errors/skein-error.js';
import type { AITool, ToolSource } from '../tools/ai-tool.js';
import { asObject, describeError, HttpError, readJsonObject } from './devui-http.js';
import { reply, type JsonReply, type RequestContext, type Route } from './devui-router.js';
import type { DevUIState } from './devui-state.js';

/** The tool runner: an agent's tools listed with their argument schemas, and one run by hand. */
export function toolRoutes(state: DevUIState): Route[] {
  return [
    { method: 'GET', path: '/api/agents/:agent/tools', handle: (context) => listTools(state, context) },
    { method: 'POST', path: '/api/agents/:agent/tools/:tool', handle: (context) => runTool(state, context) },
  ];
}

/** A tool set (an MCP server) whose tools could not be listed, and why. */
interface ToolSetError {
  toolSet: string;
  name: string;
  message: string;
}

/** An AbortSignal that fires when the browser goes away. */
function closedSignal({ res }: RequestContext): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  return controller.signal;
}

/**
 * The agent's tools: its own, then those its tool sets (MCP servers) list now. Other agents'
 * tools run on their service. A set that cannot be listed (a server that is down) is reported
 * beside the tools that could be, never hiding them.
 */
async function toolsOf(state: DevUIState, agentName: string | undefined, signal?: AbortSignal): Promise<{ tools: AITool[]; toolSetErrors: ToolSetError[] }> {
  const agent = state.agent(agentName);
  if (!(agent instanceof ChatAgent)) return { tools: [], toolSetErrors: [] };
  const tools = agent.tools;
  const toolSetErrors: ToolSetError[] = [];
  const listed = await Promise.all(
    agent.toolSets.map((set) =>
      set.listTools(signal).catch((error: unknown) => {
        const { body } = describeError(error);
        toolSetErrors.push({ toolSet: set.name, name: body.name, message: body.message });
        return [];
      }),
    ),
  );
  return { tools: [...tools, ...listed.flat()], toolSetErrors };
}

async function listTools(state: DevUIState, context: RequestContext): Promise<JsonReply> {
  const { tools, toolSetErrors } = await toolsOf(state, context.params.agent, closedSignal(context));
  return reply(200, { tools: tools.map(describeTool), ...(toolSetErrors.length ? { toolSetErrors } : {}) });
}

/** What the page needs to build a tool's form, and where the tool runs (an MCP server's name). */
function describeTool(tool: AITool): { name: string; description?: string; parameters: unknown; requiresApproval: boolean; source?: ToolSource } {
  const { name, description, parameters } = tool.declaration;
  const source = tool.source ? { ...tool.source } : undefined;
  return { name, ...(description ? { description } : {}), parameters, requiresApproval: tool.requiresApproval === true, ...(source ? { source } : {}) };
}

/**
 * Runs one of the agent's tools by hand, outside any conversation: no thread, no model. Through
 * the approval gate like every other path: a tool that needs approval runs only when the request
 * says `"approved": true` (the page's "I approve" box); `false` answers it as rejected.
 */
async function runTool(state: DevUIState, context: RequestContext): Promise<JsonReply> {
  const { agent: agentName, tool: toolName } = context.params as { agent: string; tool: string };
  const signal = closedSignal(context);
  const { tools, toolSetErrors } = await toolsOf(state, agentName, signal);
  const tool = tools.find((t) => t.declaration.name === toolName);
  if (!tool) {
    // The tool may belong to a server that could not be listed: that is the server's failure, not a wrong name.
    const failed = toolSetErrors.map((e) => `${e.toolSet} (${e.name}: ${e.message})`).join('; ');
    if (failed) throw new HttpError(502, `Agent "${agentName}" has no tool "${toolName}" among those it could list (${tools.map((t) => t.declaration.name).join(', ') || 'none'}); these tool sets could not be listed: ${failed}`, 'ToolSetUnavailableError');
    throw new HttpError(404, `Agent "${agentName}" has no tool "${toolName}"; its tools: ${tools.map((t) => t.declaration.name).join(', ') || 'none'}.`, 'NotFoundError');
  }
  const body = await readJsonObject(context.req);
  const args = body.arguments ?? {};
  asObject(args, '"arguments"');
  if (body.approved !== undefined && typeof body.approved !== 'boolean') throw new HttpError(400, `"approved" must be true or false; found ${JSON.stringify(body.approved)}.`);
  const started = performance.now();
  const call = { kind: 'function-call' as const, callId: `devui_${randomUUID()}`, name: toolName, arguments: JSON.stringify(args) };
  const approval = typeof body.approved === 'boolean' ? { kind: 'function-approval-response' as const, callId: call.callId, approved: body.approved } : undefined;
  let outcome: Awaited<ReturnType<AITool['invoke']>>;
  try {
    outcome = await runToolCall({ call, tool, approval, invoke: () => tool.invoke({ signal, call }) });
  } catch (error) {
    if (error instanceof ToolApprovalRequiredError) {
      throw new HttpError(409, `Tool "${toolName}" needs the user's approval; it was not run. Send "approved": true (the "I approve" box) to run it by hand.`, error.name);
    }
    // A tool reports its own failures as an error result; a throw is its server failing
    // (an MCP server that died or timed out): a bad gateway, not a Dev UI fault.
    if (error instanceof SkeinError) throw new HttpError(502, error.message, error.constructor.name);
    throw error;
  }
  const result: { tool: string; arguments: unknown; durationMs: number; result?: unknown; error?: string } = { tool: toolName, arguments: args, durationMs: Math.round((performance.now() - started) * 100) / 100 };
  if (outcome.error !== undefined) result.error = outcome.error;
  else result.result = outcome.result ?? null;
  return reply(200, result);
}
