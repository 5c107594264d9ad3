/**
 * The Dev UI's browser script, served as /app.js. It is compiled by tsc with the rest of the
 * package (no bundler, no dependencies), so it only uses the DOM and fetch.
 */
import type { RunSettings } from '../devui-api-types.js';
import type { TurnTrace } from '../turn-traces.js';
import { renderMarkdown } from './markdown.js';

interface AgentInfo {
  name: string;
  displayName?: string;
  description?: string;
  client: string;
}

interface ThreadSummary {
  id: string;
  agent: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  kind: 'service' | 'store' | 'unstarted';
  type: string;
  serviceThreadId?: string;
  storeKey?: string;
  pendingApprovals: number;
  /** What Delete deletes, said by the server. */
  deletion: string;
  /** Where a search found its words. */
  match?: { in: 'title' } | { in: 'messages'; excerpt: string };
}

/** A tool call waiting for the user's approval. */
interface PendingApproval {
  callId: string;
  name: string;
  arguments: string;
}

interface ApprovalAnswer {
  callId: string;
  approved: boolean;
  reason?: string;
}

interface ErrorBody {
  name: string;
  message: string;
  status?: number;
}

interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}

type Content =
  | { kind: 'text'; text: string }
  | { kind: 'function-call'; callId: string; name: string; arguments: string }
  | { kind: 'function-result'; callId: string; result?: unknown; error?: string }
  | { kind: 'usage'; usage: Usage }
  | { kind: string; [key: string]: unknown };

interface ViewMessage {
  role: string;
  authorName?: string;
  createdAt?: string;
  contents: Content[];
}

/** The settings form's values; empty fields are left out (the agent's own apply). */
function readSettings(): RunSettings | undefined {
  const settings: RunSettings = {};
  const temperature = $<HTMLInputElement>('set-temperature').value.trim();
  const maxTokens = $<HTMLInputElement>('set-max-tokens').value.trim();
  const model = $<HTMLInputElement>('set-model').value.trim();
  const instructions = $<HTMLTextAreaElement>('set-instructions').value.trim();
  if (temperature) settings.temperature = Number(temperature);
  if (maxTokens) settings.maxOutputTokens = Number(maxTokens);
  if (model) settings.model = model;
  if (instructions) settings.instructions = instructions;
  return Object.keys(settings).length ? settings : undefined;
}

function describeSettings(settings: RunSettings): string {
  const parts: string[] = [];
  if (settings.temperature !== undefined) parts.push(`temperature ${settings.temperature}`);
  if (settings.maxOutputTokens !== undefined) parts.push(`max tokens ${settings.maxOutputTokens}`);
  if (settings.model !== undefined) parts.push(`model ${settings.model}`);
  if (settings.instructions !== undefined) parts.push(`extra instructions: ${settings.instructions}`);
  return `Run settings: ${parts.join(' · ')}`;
}

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

const agentSelect = $<HTMLSelectElement>('agent');
const agentDescription = $('agent-description');
const threadList = $<HTMLUListElement>('thread-list');
const threadsEmpty = $('threads-empty');
const threadTitle = $('thread-title');
const threadMeta = $('thread-meta');
const historyNote = $('history-note');
const download = $<HTMLAnchorElement>('download');
const messages = $('messages');
const errorBox = $('error');
const errorText = $('error-text');
const composer = $<HTMLFormElement>('composer');
const input = $<HTMLTextAreaElement>('input');
const sendButton = $<HTMLButtonElement>('send');
const stopButton = $<HTMLButtonElement>('stop');
const upload = $<HTMLInputElement>('upload');
const loadNote = $('load-note');
const loadNoteText = $('load-note-text');
const loadCopy = $<HTMLButtonElement>('load-copy');

let agents: AgentInfo[] = [];
let currentThread: ThreadSummary | undefined;
let running: { runId?: string; controller: AbortController } | undefined;
/** The approval blocks of the open thread that wait for (or hold) the user's answer, by call id. */
const approvals = new Map<string, ApprovalView>();
/** Tool names by call id, to name the call an answer in the history refers to. */
const callNames = new Map<string, string>();

class ApiError extends Error {
  constructor(readonly body: ErrorBody) {
    super(body.message);
  }
}

async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  const body = (await response.json().catch(() => ({}))) as { error?: ErrorBody };
  if (!response.ok) throw new ApiError(body.error ?? { name: 'Error', message: `HTTP ${response.status} from ${path}` });
  return body as T;
}

function showError(error: unknown): void {
  const body: ErrorBody = error instanceof ApiError ? error.body : { name: 'Error', message: error instanceof Error ? error.message : String(error) };
  errorText.textContent = `${body.name}${body.status !== undefined ? ` (HTTP ${body.status})` : ''}: ${body.message}`;
  errorBox.hidden = false;
}

function clearError(): void {
  errorBox.hidden = true;
  errorText.textContent = '';
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function formatUsage(usage: Usage): string {
  const parts: string[] = [];
  if (usage.inputTokens !== undefined) parts.push(`${usage.inputTokens} in`);
  if (usage.outputTokens !== undefined) parts.push(`${usage.outputTokens} out`);
  if (usage.totalTokens !== undefined) parts.push(`${usage.totalTokens} total`);
  return `Usage: ${parts.length ? parts.join(' · ') : 'not reported'}`;
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, undefined, 2);
  } catch {
    return String(value);
  }
}

function prettyArguments(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), undefined, 2);
  } catch {
    return args;
  }
}

/** Who wrote a message, once: the author's name when it has one (with the role when that differs), else the role. */
function authorLabel(role: string, author?: string): string {
  return author && author !== role ? `${author} · ${role}` : role;
}

/** One message bubble; text, tool calls and results are appended as they arrive. */
class MessageView {
  readonly node: HTMLDivElement;
  #text: HTMLDivElement | undefined;
  #markdown = '';

  constructor(role: string, author?: string, createdAt: string | Date = new Date()) {
    this.node = el('div', 'message');
    this.node.dataset.role = role;
    const head = el('div', 'message-head');
    head.append(el('span', 'author', authorLabel(role, author)));
    const when = new Date(createdAt);
    if (!Number.isNaN(when.getTime())) {
      const time = el('time', 'time', when.toLocaleTimeString());
      time.dateTime = when.toISOString();
      time.title = when.toLocaleString();
      head.append(time);
    }
    this.node.append(head);
    messages.append(this.node);
  }

  /** The assistant's text is Markdown (rendered safely, see markdown.ts); what others wrote is shown as typed. */
  appendText(text: string): void {
    if (!this.#text) {
      this.#text = el('div', 'text');
      this.#markdown = '';
      this.node.append(this.#text);
    }
    if (this.node.dataset.role === 'assistant') {
      this.#markdown += text;
      this.#text.classList.add('markdown');
      this.#text.innerHTML = renderMarkdown(this.#markdown);
    } else {
      this.#text.textContent += text;
    }
    messages.scrollTop = messages.scrollHeight;
  }

  /** An image the message carries (inline data or an address), shown as an image. */
  addImage(src: string, alt: string): void {
    const image = el('img', 'message-image');
    image.src = src;
    image.alt = alt;
    image.referrerPolicy = 'no-referrer';
    this.node.append(image);
    this.#text = undefined;
  }

  /** `hostedServer`: the call was made by the AI service on that hosted MCP server. */
  addToolCall(callId: string, name: string, args: string, hostedServer?: string): void {
    callNames.set(callId, name);
    const details = el('details', 'tool-call');
    details.dataset.callId = callId;
    const where = hostedServer !== undefined ? ` (MCP server "${hostedServer}", called by the service)` : '';
    details.append(el('summary', undefined, `Tool call: ${name}${where}`), el('pre', 'tool-arguments', prettyArguments(args)));
    this.node.append(details);
    this.#text = undefined;
  }

  addToolResult(callId: string, result: unknown, error: string | undefined): void {
    if (attachToolResult(callId, result, error)) return;
    const details = el('details', 'tool-call');
    details.dataset.callId = callId;
    details.append(el('summary', undefined, `Tool result ${callId}`), resultNode(result, error));
    this.node.append(details);
  }
}

/**
 * One pending tool call with Approve / Reject (and an optional reason). When every pending call
 * of the thread has an answer, the answers go to the agent as the next turn.
 */
class ApprovalView {
  readonly node: HTMLDivElement;
  answer: ApprovalAnswer | undefined;
  /** The tool ran in the current attempt (its result arrived before the turn ended). */
  ran = false;
  readonly #status: HTMLSpanElement;
  readonly #reason: HTMLInputElement;
  readonly #buttons: HTMLButtonElement[];

  constructor(readonly request: PendingApproval) {
    this.node = el('div', 'approval');
    this.node.dataset.callId = request.callId;
    this.node.dataset.state = 'pending';
    const approve = el('button', 'approve', 'Approve');
    const reject = el('button', 'reject', 'Reject');
    this.#reason = el('input', 'reason');
    this.#reason.type = 'text';
    this.#reason.placeholder = 'Reason (optional, sent with Reject)';
    this.#reason.setAttribute('aria-label', `Reason for rejecting ${request.name}`);
    approve.type = reject.type = 'button';
    approve.setAttribute('aria-label', `Approve ${request.name}`);
    reject.setAttribute('aria-label', `Reject ${request.name}`);
    approve.addEventListener('click', () => this.#decide({ callId: request.callId, approved: true }));
    reject.addEventListener('click', () => this.#decide(withReason({ callId: request.callId, approved: false }, this.#reason.value)));
    this.#reason.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.isComposing) {
        event.preventDefault();
        reject.click();
      }
    });
    this.#buttons = [approve, reject];
    this.#status = el('span', 'approval-status', 'Waiting for your answer. Sending a message instead declines it.');
    const actions = el('div', 'approval-actions');
    actions.append(approve, reject, this.#reason);
    this.node.append(el('div', 'approval-title', `Approval needed: ${request.name}`), el('pre', 'approval-arguments', prettyArguments(request.arguments)), actions, this.#status);
    this.enable(running === undefined);
  }

  /** Answers can be given only between turns: the thread is busy while one runs. */
  enable(on: boolean): void {
    const open = on && this.node.dataset.state === 'pending';
    for (const button of this.#buttons) button.disabled = !open;
    this.#reason.disabled = !open;
  }

  #decide(answer: ApprovalAnswer): void {
    if (running || this.node.dataset.state !== 'pending') return;
    this.answer = answer;
    this.node.dataset.state = 'answered';
    this.enable(false);
    const waiting = [...approvals.values()].filter((a) => !a.answer).length;
    this.#status.textContent = `${describeAnswer(answer, this.request.name)}.${waiting ? ` Answer the other ${waiting === 1 ? 'request' : `${waiting} requests`} to continue.` : ''}`;
    if (!waiting) void sendApprovals();
  }

  /** The turn with this answer failed or stopped: the call is still pending, ask again. */
  reopen(): void {
    // The agent ran an approved tool before the turn failed, yet the thread (unchanged) still waits: say so, it may have had effects.
    this.#status.textContent = 'Still waiting for your answer (the last attempt did not finish).';
    this.answer = undefined;
    this.ran = false;
    this.node.dataset.state = 'pending';
    this.enable(running === undefined);
  }

  /** The agent settled the call: it ran (approved) or was answered with an error result. */
  settle(turnFailed = false): void {
    this.node.dataset.state = 'settled';
    this.enable(false);
    this.#status.textContent = !this.answer
      ? 'Not answered: declined when you sent a message instead.'
      : this.ran && turnFailed
        ? `${describeAnswer(this.answer, this.request.name)}; it ran and its result is kept, but the turn did not finish. Send a message to continue.`
        : `${describeAnswer(this.answer, this.request.name)}.`;
  }
}

function withReason(answer: ApprovalAnswer, reason: string): ApprovalAnswer {
  return reason.trim() ? { ...answer, reason: reason.trim() } : answer;
}

function describeAnswer(answer: { approved: boolean; reason?: string }, name: string): string {
  return answer.approved ? `Approved ${name}` : `Rejected ${name}${answer.reason ? `: ${answer.reason}` : ''}`;
}

/** Shows a pending call's Approve / Reject under its tool call, or in a bubble of its own. */
function showApproval(request: PendingApproval): void {
  if (approvals.has(request.callId)) return;
  const view = new ApprovalView(request);
  approvals.set(request.callId, view);
  const call = Array.from(messages.querySelectorAll<HTMLElement>('details.tool-call')).find((d) => d.dataset.callId === request.callId);
  if (call) call.after(view.node);
  else new MessageView('assistant').node.append(view.node);
  messages.scrollTop = messages.scrollHeight;
}

/** After a turn: calls no longer pending were settled by it. */
function settleApprovals(stillPending: readonly PendingApproval[], turnFailed = false): void {
  for (const [callId, view] of approvals) {
    if (stillPending.some((p) => p.callId === callId)) continue;
    view.settle(turnFailed);
    approvals.delete(callId);
  }
}

function resetApprovals(): void {
  approvals.clear();
  callNames.clear();
}

function resultNode(result: unknown, error: string | undefined): HTMLPreElement {
  return el('pre', error !== undefined ? 'tool-result failed' : 'tool-result', error !== undefined ? `Error: ${error}` : `Result: ${stringify(result)}`);
}

/** Puts a result under the call it answers, wherever that call is shown; false when it is not shown. */
function attachToolResult(callId: string, result: unknown, error: string | undefined): boolean {
  const target = Array.from(messages.querySelectorAll<HTMLDetailsElement>('details.tool-call')).find(
    (d) => d.dataset.callId === callId && !d.querySelector('.tool-result'),
  );
  if (!target) return false;
  target.append(resultNode(result, error));
  const summary = target.querySelector('summary');
  if (summary) summary.textContent += error !== undefined ? ' (failed)' : ' ✓';
  return true;
}

/** A result goes under its call; only a result whose call is not shown gets its own bubble. */
function showToolResult(callId: string, result: unknown, error: string | undefined): void {
  if (!attachToolResult(callId, result, error)) new MessageView('tool').addToolResult(callId, result, error);
}

function renderMessage(message: ViewMessage, pendingIds: ReadonlySet<string> = new Set(), forkAt?: number): void {
  const onlyResults = message.role === 'tool' && message.contents.every((c) => c.kind === 'function-result');
  const view = onlyResults ? undefined : new MessageView(message.role, message.authorName, message.createdAt ?? '');
  if (view && forkAt !== undefined) {
    const fork = el('button', 'fork', 'Fork from here');
    fork.type = 'button';
    fork.dataset.at = String(forkAt);
    fork.setAttribute('aria-label', `Fork the thread from message ${forkAt + 1}`);
    fork.addEventListener('click', () => void forkThread(forkAt).catch(showError));
    view.node.querySelector('.message-head')!.append(fork);
  }
  for (const content of message.contents) {
    if (content.kind === 'text') view?.appendText((content as { text: string }).text);
    else if (content.kind === 'function-call') {
      const call = content as { callId: string; name: string; arguments: string };
      view?.addToolCall(call.callId, call.name, call.arguments);
    } else if (content.kind === 'function-result') {
      const result = content as { callId: string; result?: unknown; error?: string };
      if (view) view.addToolResult(result.callId, result.result, result.error);
      else showToolResult(result.callId, result.result, result.error);
    } else if (content.kind === 'hosted-mcp-call') {
      const call = content as unknown as { callId: string; name: string; arguments: string; serverLabel: string; result?: string; error?: string };
      view?.addToolCall(call.callId, call.name, call.arguments, call.serverLabel);
      view?.addToolResult(call.callId, call.result, call.error);
    } else if (content.kind === 'hosted-mcp-tools') {
      // The service's listing of a hosted server's tools: kept to send back, not for display.
    } else if (content.kind === 'usage') {
      messages.append(el('div', 'usage', formatUsage((content as { usage: Usage }).usage)));
    } else if (content.kind === 'function-approval-request') {
      // A pending one gets its buttons after the history is shown; an answered one is a note.
      const request = content as unknown as PendingApproval;
      if (!pendingIds.has(request.callId)) view?.node.append(el('div', 'approval-note', `Asked for approval: ${request.name}`));
    } else if (content.kind === 'function-approval-response') {
      const answer = content as unknown as ApprovalAnswer;
      view?.appendText(describeAnswer(answer, callNames.get(answer.callId) ?? answer.callId) + '\n');
    } else if (content.kind === 'data' || content.kind === 'uri') {
      const image = imageSource(content as { kind: string; data?: string; uri?: string; mediaType?: string });
      if (image) view?.addImage(image, 'Image in the message');
      else view?.appendText(`[${content.kind}] ${stringify(content)}`);
    } else {
      view?.appendText(`[${content.kind}] ${stringify(content)}`);
    }
  }
}

/** The address to show a data or uri content as an image, when it is one (raster images over http(s) or inline). */
function imageSource(content: { kind: string; data?: string; uri?: string; mediaType?: string }): string | undefined {
  const raster = /^image\/(?:png|jpeg|gif|webp)$/;
  if (content.kind === 'data') return content.data && raster.test(content.mediaType ?? '') ? `data:${content.mediaType};base64,${content.data}` : undefined;
  const uri = content.uri ?? '';
  if (/^data:image\/(?:png|jpeg|gif|webp);base64,/i.test(uri)) return uri;
  const looksLikeImage = raster.test(content.mediaType ?? '') || /\.(?:png|jpe?g|gif|webp)(?:[?#].*)?$/i.test(uri);
  return looksLikeImage && /^https?:\/\//i.test(uri) ? uri : undefined;
}

/** Copy buttons of code blocks (rendered Markdown holds no scripts, so one listener serves them all). */
function copyCode(event: MouseEvent): void {
  const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button.copy-code');
  const code = button?.parentElement?.querySelector('code')?.textContent;
  if (!button || code === undefined || code === null) return;
  navigator.clipboard.writeText(code).then(
    () => (button.textContent = 'Copied'),
    () => (button.textContent = 'Copy failed'),
  );
}

const formatMs = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);

/** A turn's spans as a timeline: one row per span, indented under its parent, a bar for when it ran. */
function traceView(trace: TurnTrace, label: string): HTMLDetailsElement {
  const details = el('details', 'trace');
  details.dataset.runId = trace.runId;
  details.append(el('summary', undefined, `${label} · ${trace.spans.length} spans · ${formatMs(trace.durationMs)}`));
  if (trace.settings) details.append(el('div', 'turn-settings', describeSettings(trace.settings)));
  const depth = new Map<string, number>();
  const total = Math.max(trace.durationMs, 1);
  for (const span of trace.spans) {
    const level = span.parentSpanId !== undefined && depth.has(span.parentSpanId) ? depth.get(span.parentSpanId)! + 1 : 0;
    depth.set(span.spanId, level);
    const row = el('div', 'span-row');
    row.dataset.operation = span.operation ?? '';
    row.dataset.status = span.status;
    const head = el('div', 'span-head');
    const bar = el('span', 'span-bar');
    const fill = el('span', 'span-fill');
    fill.style.left = `${(span.startMs / total) * 100}%`;
    fill.style.width = `${Math.max((span.durationMs / total) * 100, 0.5)}%`;
    bar.append(fill);
    // Only the name is indented under its parent, so every bar sits on the same time axis.
    const name = el('span', 'span-name', span.name);
    name.style.paddingLeft = `${level * 14}px`;
    head.append(name, bar, el('span', 'span-duration', formatMs(span.durationMs)));
    row.append(head);
    const info = el('div', 'span-details');
    info.style.paddingLeft = `${level * 14}px`;
    const facts: string[] = [];
    if (span.model) facts.push(`model ${span.model}`);
    if (span.inputTokens !== undefined || span.outputTokens !== undefined) facts.push(`tokens ${span.inputTokens ?? '?'} in / ${span.outputTokens ?? '?'} out`);
    if (span.finishReasons?.length) facts.push(`finish ${span.finishReasons.join(', ')}`);
    if (span.toolSource) facts.push(describeSource(span.toolSource, span.toolName));
    if (facts.length) info.append(el('div', 'span-facts', facts.join(' · ')));
    if (span.toolArguments !== undefined) info.append(el('pre', 'span-arguments', `Arguments: ${prettyArguments(span.toolArguments)}`));
    if (span.toolResult !== undefined) info.append(el('pre', 'span-result', `Result: ${prettyArguments(span.toolResult)}`));
    if (span.error !== undefined) info.append(el('div', 'span-error', `Error: ${span.error}`));
    for (const [title, body] of [['Request', span.request], ['Response', span.response]] as const) {
      if (body === undefined) continue;
      const raw = el('details', 'span-body');
      raw.append(el('summary', undefined, title), el('pre', undefined, prettyArguments(body)));
      info.append(raw);
    }
    row.append(info);
    details.append(row);
  }
  return details;
}

/** The traces of the open thread's turns taken this session, under its history. */
function showThreadTraces(traces: readonly TurnTrace[]): void {
  if (!traces.length) return;
  const section = el('section', 'thread-traces');
  section.setAttribute('aria-label', 'Traces of this session\'s turns');
  section.append(el('h3', undefined, 'Traces of the turns taken in this session'));
  for (const trace of traces) section.append(traceView(trace, `Turn at ${new Date(trace.startedAt).toLocaleTimeString()}`));
  messages.append(section);
}

/** Where a tool runs when it is not a local function (an MCP server). */
interface ToolSourceInfo {
  kind: string;
  server?: string;
  name?: string;
}

/** A tool of the selected agent, with the JSON Schema of its arguments. */
interface ToolInfo {
  name: string;
  description?: string;
  parameters: JsonSchema;
  requiresApproval: boolean;
  source?: ToolSourceInfo;
}

/** `MCP server "files"`, plus the tool's own name there when the agent sees it under a prefix. */
function describeSource(source: ToolSourceInfo, exposedName?: string): string {
  const where = source.kind === 'mcp' ? 'MCP server' : source.kind;
  const server = source.server !== undefined ? ` "${source.server}"` : '';
  const own = source.name !== undefined && source.name !== exposedName ? ` (tool "${source.name}" there)` : '';
  return `${where}${server}${own}`;
}

interface JsonSchema {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  default?: unknown;
}

const toolDialog = $<HTMLDialogElement>('tool-dialog');
const toolFields = $('tool-fields');
const toolOutput = $<HTMLPreElement>('tool-output');
let openTool: ToolInfo | undefined;

async function loadTools(): Promise<void> {
  const agent = agentSelect.value;
  const { tools, toolSetErrors = [] } = await api<{ tools: ToolInfo[]; toolSetErrors?: { toolSet: string; name: string; message: string }[] }>(`/api/agents/${encodeURIComponent(agent)}/tools`);
  if (agentSelect.value !== agent) return;
  $('tools-empty').hidden = tools.length > 0 || toolSetErrors.length > 0;
  const errors = $('tools-errors');
  errors.hidden = toolSetErrors.length === 0;
  errors.replaceChildren(...toolSetErrors.map((e) => el('li', undefined, `Could not list the tools of ${e.toolSet}: ${e.name}: ${e.message}`)));
  $('tool-list').replaceChildren(
    ...tools.map((tool) => {
      const item = el('li');
      const button = el('button', undefined, tool.name);
      button.type = 'button';
      button.title = tool.description ?? '';
      const source = tool.source ? describeSource(tool.source, tool.name) : undefined;
      if (source) button.append(el('span', 'tool-source', ` · ${source}`));
      button.setAttribute('aria-label', `Run tool ${tool.name}${source ? ` from ${source}` : ''} by hand`);
      button.addEventListener('click', () => showToolForm(tool));
      item.append(button);
      return item;
    }),
  );
}

const typeOf = (schema: JsonSchema) => (Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type);

/** A form field per property of the tool's argument schema: text, number, checkbox, a choice, or JSON for the rest. */
function fieldFor(name: string, schema: JsonSchema, required: boolean): HTMLLabelElement {
  const type = typeOf(schema);
  const label = el('label');
  label.dataset.name = name;
  label.dataset.type = schema.enum ? 'enum' : (type ?? 'json');
  const caption = `${name}${required ? ' (required)' : ''}${schema.description ? ` — ${schema.description}` : ''}`;
  let control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
  if (schema.enum) {
    control = el('select');
    if (!required) control.append(el('option', undefined, ''));
    for (const value of schema.enum) {
      const option = el('option', undefined, String(value));
      option.value = JSON.stringify(value);
      control.append(option);
    }
  } else if (type === 'boolean') {
    control = el('input');
    control.type = 'checkbox';
    label.className = 'checkbox';
  } else if (type === 'number' || type === 'integer') {
    control = el('input');
    control.type = 'number';
    control.step = type === 'integer' ? '1' : 'any';
  } else if (type === 'string') {
    control = el('input');
    control.type = 'text';
  } else {
    control = el('textarea');
    control.rows = 3;
    control.placeholder = 'JSON';
  }
  control.name = name;
  control.required = required && type !== 'boolean';
  if (label.className === 'checkbox') label.append(control, document.createTextNode(caption));
  else label.append(document.createTextNode(caption), control);
  return label;
}

function showToolForm(tool: ToolInfo): void {
  openTool = tool;
  $('tool-title').textContent = tool.name;
  $('tool-description').textContent = tool.description ?? '';
  const source = $('tool-source');
  source.hidden = !tool.source;
  source.textContent = tool.source ? `Runs on ${describeSource(tool.source, tool.name)}.` : '';
  $('tool-approval-note').hidden = !tool.requiresApproval;
  ($('tool-approve') as HTMLInputElement).checked = false;
  const required = new Set(tool.parameters.required ?? []);
  toolFields.replaceChildren(...Object.entries(tool.parameters.properties ?? {}).map(([name, schema]) => fieldFor(name, schema, required.has(name))));
  toolOutput.hidden = true;
  toolDialog.showModal();
}

/** The arguments object the form describes; empty optional fields are left out. */
function readToolArguments(): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const label of Array.from(toolFields.querySelectorAll<HTMLLabelElement>('label'))) {
    const name = label.dataset.name!;
    const control = label.querySelector<HTMLInputElement>('input, select, textarea')!;
    const value = control.value.trim();
    switch (label.dataset.type) {
      case 'boolean':
        args[name] = control.checked;
        break;
      case 'number':
      case 'integer':
        if (value) args[name] = Number(value);
        break;
      case 'string':
        if (value || control.required) args[name] = control.value;
        break;
      default:
        if (!value) break;
        try {
          args[name] = JSON.parse(value);
        } catch (error) {
          throw new ApiError({ name: 'SerializationError', message: `${name}: not JSON (${(error as Error).message}).` });
        }
    }
  }
  return args;
}

async function runTool(): Promise<void> {
  const tool = openTool;
  if (!tool) return;
  toolOutput.hidden = false;
  toolOutput.dataset.outcome = 'running';
  toolOutput.textContent = `Running ${tool.name}...`;
  try {
    const reply = await api<{ result?: unknown; error?: string; durationMs: number }>(`/api/agents/${encodeURIComponent(agentSelect.value)}/tools/${encodeURIComponent(tool.name)}`, {
      method: 'POST',
      // The box is the approval a tool that needs one must have (without it the server refuses, saying so).
      body: JSON.stringify({ arguments: readToolArguments(), ...(tool.requiresApproval && ($('tool-approve') as HTMLInputElement).checked ? { approved: true } : {}) }),
    });
    toolOutput.dataset.outcome = reply.error !== undefined ? 'error' : 'ok';
    toolOutput.textContent = `${reply.error !== undefined ? `Error: ${reply.error}` : `Result: ${stringify(reply.result)}`}\n(${formatMs(reply.durationMs)})`;
  } catch (error) {
    toolOutput.dataset.outcome = 'error';
    const body = error instanceof ApiError ? error.body : { name: 'Error', message: String(error) };
    toolOutput.textContent = `${body.name}: ${body.message}`;
  }
}

async function loadAgents(): Promise<void> {
  agents = (await api<{ agents: AgentInfo[] }>('/api/agents')).agents;
  agentFilter.append(
    ...agents.map((a) => {
      const option = el('option', undefined, a.name);
      option.value = a.name;
      return option;
    }),
  );
  agentSelect.replaceChildren(
    ...agents.map((a) => {
      const option = el('option', undefined, a.displayName && a.displayName !== a.name ? `${a.name} (${a.displayName})` : a.name);
      option.value = a.name;
      return option;
    }),
  );
  describeAgent();
}

function describeAgent(): void {
  void loadTools().catch(showError);
  const agent = agents.find((a) => a.name === agentSelect.value);
  agentDescription.textContent = agent ? `${agent.client}${agent.description ? ` — ${agent.description}` : ''}` : '';
}

const threadSearch = $<HTMLInputElement>('thread-search');
const agentFilter = $<HTMLSelectElement>('thread-agent-filter');
/** Answers to older searches are dropped when a newer one was asked. */
let threadQuery = 0;

async function loadThreads(): Promise<void> {
  const query = new URLSearchParams();
  if (threadSearch.value.trim()) query.set('q', threadSearch.value.trim());
  if (agentFilter.value) query.set('agent', agentFilter.value);
  const asked = ++threadQuery;
  const { threads } = await api<{ threads: ThreadSummary[] }>(`/api/threads${query.size ? `?${query}` : ''}`);
  if (asked !== threadQuery) return;
  const filtering = query.size > 0;
  threadsEmpty.textContent = filtering ? 'No thread matches.' : 'No threads yet. Send a message to start one.';
  threadsEmpty.hidden = threads.length > 0;
  threadList.replaceChildren(
    ...threads.map((t) => {
      const item = el('li', 'thread');
      item.dataset.id = t.id;
      if (currentThread?.id === t.id) item.classList.add('active');
      const open = el('button', 'open');
      open.type = 'button';
      open.append(el('span', 'title', t.title), el('span', 'meta', `${t.agent} · ${t.kind === 'service' ? 'service thread' : t.type} · ${new Date(t.updatedAt).toLocaleString()}`));
      if (t.match?.in === 'messages') open.append(el('span', 'excerpt', t.match.excerpt));
      if (t.pendingApprovals > 0) open.append(el('span', 'awaiting', t.pendingApprovals === 1 ? 'awaiting approval' : `${t.pendingApprovals} awaiting approval`));
      open.addEventListener('click', () => void openThread(t.id).catch(showError));
      const remove = el('button', 'delete', 'Delete');
      remove.type = 'button';
      remove.title = 'Delete thread';
      remove.setAttribute('aria-label', `Delete thread ${t.title}`);
      remove.addEventListener('click', () => void deleteThread(t).catch(showError));
      item.append(open, remove);
      return item;
    }),
  );
}

function setCurrentThread(thread: ThreadSummary | undefined): void {
  currentThread = thread;
  threadTitle.textContent = thread ? thread.title : 'New chat';
  threadMeta.textContent = thread
    ? `${thread.agent} · ${thread.kind === 'service' ? `service thread ${thread.serviceThreadId ?? ''}` : `${thread.type} thread`}`
    : '';
  download.hidden = !thread;
  $('rename').hidden = !thread;
  if (thread) {
    download.href = `/api/threads/${encodeURIComponent(thread.id)}/json`;
    download.setAttribute('download', `skein-thread-${thread.id}.json`);
    agentSelect.value = thread.agent;
    describeAgent();
  }
  for (const item of Array.from(threadList.querySelectorAll<HTMLLIElement>('li.thread'))) item.classList.toggle('active', item.dataset.id === thread?.id);
}

async function openThread(id: string): Promise<void> {
  if (running) return;
  clearError();
  loadNote.hidden = true;
  // Both before anything is drawn, so the thread appears at once, its traces under it.
  const [view, { traces }] = await Promise.all([
    api<{ thread: ThreadSummary; history: 'store' | 'transcript'; messages: ViewMessage[]; pendingApprovals: PendingApproval[] }>(`/api/threads/${encodeURIComponent(id)}`),
    api<{ traces: TurnTrace[] }>(`/api/threads/${encodeURIComponent(id)}/traces`),
  ]);
  setCurrentThread(view.thread);
  messages.replaceChildren();
  resetApprovals();
  historyNote.hidden = view.history !== 'transcript';
  historyNote.textContent = 'The service keeps this thread\'s history; shown here are the messages exchanged through this Dev UI.';
  const pendingIds = new Set(view.pendingApprovals.map((p) => p.callId));
  // A store thread's messages are its history, so each can be a fork point (agent.forkThread).
  view.messages.forEach((message, i) => renderMessage(message, pendingIds, view.history === 'store' ? i : undefined));
  // The thread's state keeps the calls waiting for approval, so they are asked again after a reload.
  for (const request of view.pendingApprovals) showApproval(request);
  showThreadTraces(traces);
}

function newChat(): void {
  if (running) return;
  clearError();
  loadNote.hidden = true;
  setCurrentThread(undefined);
  historyNote.hidden = true;
  messages.replaceChildren();
  resetApprovals();
  input.focus();
}

/** A new, independent thread holding the history up to and including message `at`; it opens at once. */
async function forkThread(at: number): Promise<void> {
  const thread = currentThread;
  if (!thread || running) return;
  const { thread: fork } = await api<{ thread: ThreadSummary }>(`/api/threads/${encodeURIComponent(thread.id)}/fork`, { method: 'POST', body: JSON.stringify({ at }) });
  await loadThreads();
  await openThread(fork.id);
}

async function renameThread(): Promise<void> {
  const thread = currentThread;
  if (!thread) return;
  const title = window.prompt('Rename this thread', thread.title);
  if (title === null || !title.trim() || title.trim() === thread.title) return;
  const renamed = await api<{ thread: ThreadSummary }>(`/api/threads/${encodeURIComponent(thread.id)}`, { method: 'PATCH', body: JSON.stringify({ title }) });
  if (currentThread?.id === thread.id) setCurrentThread(renamed.thread);
  await loadThreads();
}

async function deleteThread(thread: ThreadSummary): Promise<void> {
  if (!window.confirm(`Delete this thread?\n\n${thread.deletion}`)) return;
  await api(`/api/threads/${encodeURIComponent(thread.id)}?confirm=1`, { method: 'DELETE' });
  if (currentThread?.id === thread.id) newChat();
  await loadThreads();
}

/** The file last loaded, kept so "Load as a copy" can send it again. */
let lastLoaded: { agent: string; serialized: unknown } | undefined;

async function importFile(file: File): Promise<void> {
  clearError();
  let serialized: unknown;
  try {
    serialized = JSON.parse(await file.text());
  } catch (error) {
    throw new ApiError({ name: 'SerializationError', message: `${file.name} is not JSON: ${(error as Error).message}` });
  }
  await load({ agent: agentSelect.value, serialized });
}

/**
 * Loads a thread file. A file whose history is already listed opens that entry (the server
 * never adds a second entry on one history) and offers a real copy instead.
 */
async function load(file: { agent: string; serialized: unknown }, asCopy = false): Promise<void> {
  const { thread, loaded, message } = await api<{ thread: ThreadSummary; loaded: 'new' | 'existing' | 'copy'; message: string }>('/api/threads/import', {
    method: 'POST',
    body: JSON.stringify({ ...file, ...(asCopy ? { as: 'copy' } : {}) }),
  });
  await loadThreads();
  await openThread(thread.id);
  lastLoaded = loaded === 'existing' ? file : undefined;
  loadNote.dataset.outcome = loaded;
  loadNoteText.textContent = message;
  loadCopy.hidden = loaded !== 'existing';
  loadNote.hidden = loaded === 'new';
}

function setRunning(value: typeof running): void {
  running = value;
  sendButton.disabled = value !== undefined;
  stopButton.disabled = value === undefined;
  agentSelect.disabled = value !== undefined;
  for (const view of approvals.values()) view.enable(value === undefined);
}

/** Reads server-sent events from a fetch response. */
async function* readEvents(response: Response): AsyncGenerator<{ event: string; data: unknown }> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      yield { event, data: data ? JSON.parse(data) : undefined };
    }
  }
}

type Outcome = 'done' | 'error' | 'stopped';

/** Typed text as the next turn; the box is cleared only when the turn completes. */
async function send(): Promise<void> {
  const text = input.value;
  if (!text.trim() || running) return;
  const outcome = await runTurn({ text }, [text]);
  if (outcome === 'done') input.value = '';
  input.focus();
}

/** Every pending call has an answer: they go to the agent as the next turn on this thread. */
async function sendApprovals(): Promise<void> {
  const answered = [...approvals.values()];
  if (running || !currentThread || answered.some((a) => !a.answer)) return;
  const outcome = await runTurn(
    { approvals: answered.map((a) => a.answer!) },
    answered.map((a) => describeAnswer(a.answer!, a.request.name)),
  );
  // Failed or stopped: the thread is unchanged and its calls still wait, so ask again.
  if (outcome !== 'done') for (const view of answered) if (approvals.has(view.request.callId)) view.reopen();
}

/** Runs one turn through /api/chat and shows it as it streams; resolves when it ended. */
async function runTurn(request: { text?: string; approvals?: ApprovalAnswer[] }, userLines: string[]): Promise<Outcome> {
  clearError();
  const controller = new AbortController();
  setRunning({ controller });
  const turn = el('div', 'turn');
  turn.dataset.state = 'running';
  messages.append(turn);
  const userView = new MessageView('user');
  userView.appendText(userLines.join('\n'));
  const settings = readSettings();
  let reply: MessageView | undefined;
  const replyView = (author?: string) => (reply ??= new MessageView('assistant', author));
  let outcome: Outcome | undefined;
  try {
    const response = await fetch('/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent: agentSelect.value, threadId: currentThread?.id, ...request, ...(settings ? { settings } : {}) }),
      signal: controller.signal,
    });
    if (!response.ok || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      const body = (await response.json().catch(() => ({}))) as { error?: ErrorBody };
      throw new ApiError(body.error ?? { name: 'Error', message: `HTTP ${response.status}` });
    }
    for await (const { event, data } of readEvents(response)) {
      const d = data as Record<string, unknown>;
      if (event === 'run') {
        running!.runId = d.runId as string;
        // Shown with the turn that used them (the server echoes what it applied).
        if (d.settings) userView.node.after(el('div', 'turn-settings', describeSettings(d.settings as RunSettings)));
      }
      else if (event === 'delta') {
        if (d.role === 'tool') new MessageView('tool').appendText(d.text as string);
        else replyView(d.authorName as string | undefined).appendText(d.text as string);
      } else if (event === 'tool-call') {
        replyView(d.authorName as string | undefined).addToolCall(d.callId as string, d.name as string, d.arguments as string, d.hostedServer as string | undefined);
      } else if (event === 'tool-result') {
        const approval = approvals.get(d.callId as string);
        if (approval?.answer?.approved) approval.ran = true;
        showToolResult(d.callId as string, d.result, d.error as string | undefined);
        reply = undefined;
      } else if (event === 'approval-request') {
        showApproval(d as unknown as PendingApproval);
        reply = undefined;
      } else if (event === 'notice') {
        replyView().appendText(`\n[${d.message as string}]`);
      } else if (event === 'trace') {
        messages.append(traceView((d as { trace: TurnTrace }).trace, 'Trace'));
      } else if (event === 'usage') {
        messages.append(el('div', 'usage', formatUsage(d.usage as Usage)));
        messages.scrollTop = messages.scrollHeight;
      } else if (event === 'done') {
        outcome = 'done';
        setCurrentThread(d.thread as ThreadSummary);
        settleApprovals((d.pendingApprovals as PendingApproval[] | undefined) ?? []);
      } else if (event === 'stopped') {
        outcome = 'stopped';
        messages.append(el('div', 'turn-note', d.message as string));
      } else if (event === 'error') {
        outcome = 'error';
        // The agent kept the results of approved tools that already ran: those calls are settled.
        if (d.pendingApprovals) settleApprovals(d.pendingApprovals as PendingApproval[], true);
        if (d.thread) setCurrentThread(d.thread as ThreadSummary);
        throw new ApiError(d as unknown as ErrorBody);
      }
    }
    if (outcome === undefined) throw new ApiError({ name: 'ConnectionError', message: 'The connection to the Dev UI server closed before the turn finished; the thread is unchanged.' });
  } catch (error) {
    if (controller.signal.aborted) {
      outcome = 'stopped';
    } else {
      outcome = 'error';
      const kept = request.text !== undefined ? ' and your message is still in the box' : '';
      messages.append(el('div', 'turn-note', `This turn failed; the thread is unchanged${kept}.`));
      showError(error);
    }
  } finally {
    setRunning(undefined);
  }
  await loadThreads().catch(showError);
  // Marked last, so whoever waits for the turn to end also sees the refreshed sidebar.
  turn.dataset.state = outcome;
  return outcome;
}

async function stop(): Promise<void> {
  const run = running;
  if (!run) return;
  if (run.runId) {
    await api(`/api/runs/${encodeURIComponent(run.runId)}/stop`, { method: 'POST' }).catch(() => run.controller.abort());
  } else {
    run.controller.abort();
  }
}

composer.addEventListener('submit', (event) => {
  event.preventDefault();
  void send();
});
input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    void send();
  }
});
stopButton.addEventListener('click', () => void stop());
$('new-chat').addEventListener('click', newChat);
messages.addEventListener('click', copyCode);
$('load-json').addEventListener('click', () => upload.click());
$('error-close').addEventListener('click', clearError);
threadSearch.addEventListener('input', () => void loadThreads().catch(showError));
agentFilter.addEventListener('change', () => void loadThreads().catch(showError));
$('rename').addEventListener('click', () => void renameThread().catch(showError));
$('tool-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void runTool();
});
$('tool-close').addEventListener('click', () => toolDialog.close());
$('settings-clear').addEventListener('click', () => {
  for (const id of ['set-temperature', 'set-max-tokens', 'set-model', 'set-instructions']) $<HTMLInputElement>(id).value = '';
});
agentSelect.addEventListener('change', () => {
  describeAgent();
  if (currentThread && currentThread.agent !== agentSelect.value) newChat();
});
loadCopy.addEventListener('click', () => {
  if (lastLoaded) void load(lastLoaded, true).catch(showError);
});
upload.addEventListener('change', () => {
  const file = upload.files?.[0];
  upload.value = '';
  if (file) void importFile(file).catch(showError);
});

/**
 * The printed address carries the Dev UI's access token: trade it for the HttpOnly cookie that
 * authorizes every API call, then drop it from the address bar (and so from the history).
 */
async function startSession(): Promise<void> {
  const token = new URLSearchParams(window.location.search).get('token');
  if (token === null) return;
  history.replaceState(null, '', window.location.pathname);
  await api('/api/session', { method: 'POST', body: JSON.stringify({ token }) });
}

startSession()
  .then(() => Promise.all([loadAgents(), loadThreads()]))
  .then(() => document.body.setAttribute('data-ready', 'true'))
  .catch((error: unknown) => {
    showError(error);
    document.body.setAttribute('data-ready', 'failed');
  });
