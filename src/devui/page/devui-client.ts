/**
 * The Dev UI's browser script, served as /app.js: it runs the chat turns and starts the page. It
 * and the modules it imports (each served by its name, e.g. /thread-list.js) are compiled by tsc
 * with the rest of the package (no bundler, no dependencies), so they only use the DOM and fetch.
 */
import type { ApprovalAnswer, ErrorBody, PendingApproval, RunSettings, ThreadSummary } from '../devui-api-types.js';
import type { TurnTrace } from '../turn-traces.js';
import { loadAgents, describeAgent } from './agent-picker.js';
import { api, ApiError, clearError, readEvents, showError } from './api-client.js';
import { approvals, settleApprovals, showApproval, whenAllAnswered } from './approval-view.js';
import { $, agentSelect, el, messages } from './dom.js';
import { describeAnswer, describeSettings, formatUsage } from './format.js';
import { copyCode, MessageView, showToolResult } from './message-view.js';
import { page, type RunningTurn } from './page-state.js';
import type { Usage } from './page-types.js';
import './thread-import.js';
import { loadThreads, newChat, setCurrentThread } from './thread-list.js';
import { traceView } from './trace-view.js';

const composer = $<HTMLFormElement>('composer');
const input = $<HTMLTextAreaElement>('input');
const sendButton = $<HTMLButtonElement>('send');
const stopButton = $<HTMLButtonElement>('stop');

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

function setRunning(value: RunningTurn | undefined): void {
  page.running = value;
  sendButton.disabled = value !== undefined;
  stopButton.disabled = value === undefined;
  agentSelect.disabled = value !== undefined;
  for (const view of approvals.values()) view.enable(value === undefined);
}

type Outcome = 'done' | 'error' | 'stopped';

/** A durable run's cut stream is read on from its last event id: this many tries, this far apart (a restart takes seconds). */
const RECONNECT_TRIES = 60;
const RECONNECT_DELAY_MS = 500;

/** Typed text as the next turn; the box is cleared only when the turn completes. */
async function send(): Promise<void> {
  const text = input.value;
  if (!text.trim() || page.running) return;
  const outcome = await runTurn({ text }, [text]);
  if (outcome === 'done') input.value = '';
  input.focus();
}

/** Every pending call has an answer: they go to the agent as the next turn on this thread. */
async function sendApprovals(): Promise<void> {
  const answered = [...approvals.values()];
  if (page.running || !page.currentThread || answered.some((a) => !a.answer)) return;
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
  // A durable run's model calls: the reply each showed, so a `retract` (the call was made again after a crash) removes it.
  const shownBy = new Map<string, MessageView>();
  let replyCall: string | undefined;
  const replyFor = (d: Record<string, unknown>) => {
    const call = d.modelCall as string | undefined;
    if (call !== undefined && call !== replyCall) [reply, replyCall] = [undefined, call];
    const view = replyView(d.authorName as string | undefined);
    if (call !== undefined) shownBy.set(call, view);
    return view;
  };
  let durableRun: string | undefined;
  let lastId: string | undefined;
  let outcome: Outcome | undefined;
  try {
    const response = await fetch('/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent: agentSelect.value, threadId: page.currentThread?.id, ...request, ...(settings ? { settings } : {}) }),
      signal: controller.signal,
    });
    if (!response.ok || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      const body = (await response.json().catch(() => ({}))) as { error?: ErrorBody };
      throw new ApiError(body.error ?? { name: 'Error', message: `HTTP ${response.status}` });
    }
    const handle = (event: string, d: Record<string, unknown>) => {
      if (event === 'run') {
        page.running!.runId = d.runId as string;
        if (d.durable) durableRun = d.runId as string;
        // Shown with the turn that used them (the server echoes what it applied).
        if (d.settings) userView.node.after(el('div', 'turn-settings', describeSettings(d.settings as RunSettings)));
      }
      else if (event === 'delta') {
        if (d.role === 'tool') new MessageView('tool').appendText(d.text as string);
        else replyFor(d).appendText(d.text as string);
      } else if (event === 'retract') {
        shownBy.get(d.modelCall as string)?.node.remove();
        shownBy.delete(d.modelCall as string);
        [reply, replyCall] = [undefined, undefined];
      } else if (event === 'tool-call') {
        replyFor(d).addToolCall(d.callId as string, d.name as string, d.arguments as string, d.hostedServer as string | undefined);
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
    };
    const consume = async (stream: Response) => {
      try {
        for await (const { event, data, id } of readEvents(stream)) {
          if (id !== undefined) lastId = id;
          handle(event, data as Record<string, unknown>);
        }
      } catch (error) {
        // A durable run goes on when its stream is cut (a server restart): the loop below reads on.
        if (error instanceof ApiError || durableRun === undefined || controller.signal.aborted) throw error;
      }
    };
    await consume(response);
    for (let tries = 0; outcome === undefined && durableRun !== undefined && tries < RECONNECT_TRIES; tries++) {
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
      const again = await fetch(`/api/runs/${encodeURIComponent(durableRun)}/events`, { headers: lastId !== undefined ? { 'last-event-id': lastId } : {}, signal: controller.signal }).catch(() => undefined);
      if (again?.status === 400 || again?.status === 404) break;
      if (again?.ok) await consume(again);
    }
    if (outcome === undefined && durableRun !== undefined) throw new ApiError({ name: 'ConnectionError', message: `The connection to the Dev UI server closed before the turn finished and could not be made again; the durable run ${durableRun} goes on: reload the thread later to see its turn.` });
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
  const run = page.running;
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
$('error-close').addEventListener('click', clearError);
$('settings-clear').addEventListener('click', () => {
  for (const id of ['set-temperature', 'set-max-tokens', 'set-model', 'set-instructions']) $<HTMLInputElement>(id).value = '';
});
agentSelect.addEventListener('change', () => {
  describeAgent();
  if (page.currentThread && page.currentThread.agent !== agentSelect.value) newChat();
});
whenAllAnswered(() => void sendApprovals());

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
