import type { ApprovalAnswer, PendingApproval } from '../devui-api-types.js';
import { el, messages } from './dom.js';
import { describeAnswer, prettyArguments, withReason } from './format.js';
import { callNames, MessageView } from './message-view.js';
import { page } from './page-state.js';

/** The approval blocks of the open thread that wait for (or hold) the user's answer, by call id. */
export const approvals = new Map<string, ApprovalView>();

let sendAnswers: () => void = () => undefined;

/** What to do once every pending call has an answer (the page's script sends them as the next turn). */
export function whenAllAnswered(send: () => void): void {
  sendAnswers = send;
}

/**
 * One pending tool call with Approve / Reject (and an optional reason). When every pending call
 * of the thread has an answer, the answers go to the agent as the next turn.
 */
export class ApprovalView {
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
    this.enable(page.running === undefined);
  }

  /** Answers can be given only between turns: the thread is busy while one runs. */
  enable(on: boolean): void {
    const open = on && this.node.dataset.state === 'pending';
    for (const button of this.#buttons) button.disabled = !open;
    this.#reason.disabled = !open;
  }

  #decide(answer: ApprovalAnswer): void {
    if (page.running || this.node.dataset.state !== 'pending') return;
    this.answer = answer;
    this.node.dataset.state = 'answered';
    this.enable(false);
    const waiting = [...approvals.values()].filter((a) => !a.answer).length;
    this.#status.textContent = `${describeAnswer(answer, this.request.name)}.${waiting ? ` Answer the other ${waiting === 1 ? 'request' : `${waiting} requests`} to continue.` : ''}`;
    if (!waiting) sendAnswers();
  }

  /** The turn with this answer failed or stopped: the call is still pending, ask again. */
  reopen(): void {
    // The agent ran an approved tool before the turn failed, yet the thread (unchanged) still waits: say so, it may have had effects.
    this.#status.textContent = 'Still waiting for your answer (the last attempt did not finish).';
    this.answer = undefined;
    this.ran = false;
    this.node.dataset.state = 'pending';
    this.enable(page.running === undefined);
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

/** Shows a pending call's Approve / Reject under its tool call, or in a bubble of its own. */
export function showApproval(request: PendingApproval): void {
  if (approvals.has(request.callId)) return;
  const view = new ApprovalView(request);
  approvals.set(request.callId, view);
  const call = Array.from(messages.querySelectorAll<HTMLElement>('details.tool-call')).find((d) => d.dataset.callId === request.callId);
  if (call) call.after(view.node);
  else new MessageView('assistant').node.append(view.node);
  messages.scrollTop = messages.scrollHeight;
}

/** After a turn: calls no longer pending were settled by it. */
export function settleApprovals(stillPending: readonly PendingApproval[], turnFailed = false): void {
  for (const [callId, view] of approvals) {
    if (stillPending.some((p) => p.callId === callId)) continue;
    view.settle(turnFailed);
    approvals.delete(callId);
  }
}

export function resetApprovals(): void {
  approvals.clear();
  callNames.clear();
}
