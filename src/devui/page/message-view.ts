import type { ApprovalAnswer, PendingApproval } from '../devui-api-types.js';
import { showError } from './api-client.js';
import { el, messages } from './dom.js';
import { authorLabel, describeAnswer, formatUsage, prettyArguments, stringify } from './format.js';
import { renderMarkdown } from './markdown.js';
import type { Usage, ViewMessage } from './page-types.js';

/** Tool names by call id, to name the call an answer in the history refers to. */
export const callNames = new Map<string, string>();

/** One message bubble; text, tool calls and results are appended as they arrive. */
export class MessageView {
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
export function showToolResult(callId: string, result: unknown, error: string | undefined): void {
  if (!attachToolResult(callId, result, error)) new MessageView('tool').addToolResult(callId, result, error);
}

/** One message of a thread's history; with `fork`, a "Fork from here" button forks the thread at it. */
export function renderMessage(message: ViewMessage, pendingIds: ReadonlySet<string> = new Set(), fork?: { at: number; onFork: (at: number) => Promise<void> }): void {
  const onlyResults = message.role === 'tool' && message.contents.every((c) => c.kind === 'function-result');
  const view = onlyResults ? undefined : new MessageView(message.role, message.authorName, message.createdAt ?? '');
  if (view && fork) {
    const button = el('button', 'fork', 'Fork from here');
    button.type = 'button';
    button.dataset.at = String(fork.at);
    button.setAttribute('aria-label', `Fork the thread from message ${fork.at + 1}`);
    button.addEventListener('click', () => void fork.onFork(fork.at).catch(showError));
    view.node.querySelector('.message-head')!.append(button);
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
export function copyCode(event: MouseEvent): void {
  const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button.copy-code');
  const code = button?.parentElement?.querySelector('code')?.textContent;
  if (!button || code === undefined || code === null) return;
  navigator.clipboard.writeText(code).then(
    () => (button.textContent = 'Copied'),
    () => (button.textContent = 'Copy failed'),
  );
}
