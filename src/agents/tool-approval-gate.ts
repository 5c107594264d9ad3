import { SkeinError } from '../errors/skein-error.js';
import type { FunctionApprovalResponseContent, FunctionCallContent, FunctionResultContent } from '../messages/content.js';
import type { AITool } from '../tools/ai-tool.js';

/**
 * A tool marked `requiresApproval` was asked to run without the user's answer to that call.
 * Reaching it is a bug in the caller (or, in the Dev UI tool runner, a request without the
 * user's confirmation): the tool did not run.
 */
export class ToolApprovalRequiredError extends SkeinError {
  constructor(readonly call: FunctionCallContent) {
    super(
      `Tool "${call.name}" needs the user's approval and call ${call.callId} has none; it was not run. ` +
        'Stop the turn with an approval request and run the call with the answer (a function-approval-response for this call id).',
    );
  }
}

/** One call to run, with the user's answer when its tool needs one. */
export interface ToolCallRun {
  call: FunctionCallContent;
  tool: AITool;
  /** The user's answer to this call's approval request; needed when the tool requires approval. */
  approval?: FunctionApprovalResponseContent;
  /** Runs the call: `tool.invoke`, usually wrapped in the function-call middleware. */
  invoke: () => Promise<FunctionResultContent>;
}

/** Whether a call of this tool must wait for the user's approval. */
export function requiresApproval(tool: AITool | undefined): boolean {
  return tool?.requiresApproval === true;
}

/** The calls the model asked for, split into those that may run now and those that wait for the user. */
export function partitionByApproval(calls: readonly FunctionCallContent[], tools: ReadonlyMap<string, AITool>): { runNow: FunctionCallContent[]; awaitApproval: FunctionCallContent[] } {
  const runNow: FunctionCallContent[] = [];
  const awaitApproval: FunctionCallContent[] = [];
  for (const call of calls) (requiresApproval(tools.get(call.name)) ? awaitApproval : runNow).push(call);
  return { runNow, awaitApproval };
}

/**
 * The one enforcement point of tool approvals: every place in Skein that executes a tool call
 * runs it through here, so a tool marked `requiresApproval` never runs without the user's
 * answer to that very call, and a rejected call never runs. The places (also listed in
 * docs/approvals.md):
 * - the function-invocation loop of `ChatAgent` (src/agents/function-invocation-loop.ts) and its
 *   settling of answered approvals (src/agents/chat-agent.ts): every ChatAgent kind, among them
 *   Chat Completions, Responses and Foundry Agents (plugins/azure-ai-agents);
 * - the Assistants run processor (plugins/openai/assistants/openai-assistant-run-processor.ts),
 *   polled and streamed;
 * - the Dev UI tool runner (`POST /api/agents/:agent/tools/:tool`, src/devui/tool-routes.ts),
 *   where the page's confirmation is the approval.
 * The A2A server, `skein mcp serve`, `skein chat`, the Dev UI chat and group chats run tools only
 * by running an agent, so they go through the agent's path above; they carry the user's answers
 * in (`function-approval-response`) and show the requests out.
 */
export async function runToolCall(request: ToolCallRun): Promise<FunctionResultContent> {
  const { call, tool, approval } = request;
  if (requiresApproval(tool)) {
    if (approval?.callId !== call.callId) throw new ToolApprovalRequiredError(call);
    if (!approval.approved) return rejected(call, approval);
  }
  return request.invoke();
}

/** The result of a call the user rejected: the model reads why it did not run. */
export function rejected(call: FunctionCallContent, answer: FunctionApprovalResponseContent): FunctionResultContent {
  return { kind: 'function-result', callId: call.callId, error: `not run: the user rejected this call${answer.reason ? `: ${answer.reason}` : ''}.` };
}
