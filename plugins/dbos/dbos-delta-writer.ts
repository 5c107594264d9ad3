import { AsyncLocalStorage } from 'node:async_hooks';
import type { AgentRunResponseUpdate, DurableModelCall } from 'skein';

/** A pending entry is written once it is this old (ms)... */
export const DELTA_FLUSH_MS = 50;
/** ...or holds this many characters of text and tool-call arguments, whichever comes first. */
export const DELTA_FLUSH_CHARS = 400;

type Write = (update: AgentRunResponseUpdate & { modelCall: DurableModelCall }) => Promise<void>;

/**
 * Coalesces the streamed updates of one attempt of one model call into few stream entries:
 * adjacent text deltas (and argument deltas of one tool call) of one message are joined, and an
 * entry is written per DELTA_FLUSH_MS or DELTA_FLUSH_CHARS, never per token. Made inside the
 * model step: its writes run in the step's context (DBOS writes a step's stream entries without
 * a checkpoint, one row each), in order, and `close` waits for them before the step is recorded.
 */
export class DeltaWriter {
  readonly #modelCall: DurableModelCall;
  readonly #write: Write;
  #pending: AgentRunResponseUpdate | undefined;
  #chars = 0;
  #timer: NodeJS.Timeout | undefined;
  #written = false;
  #chain: Promise<void> = Promise.resolve();
  #failure: { error: unknown } | undefined;

  constructor(modelCall: { id: string; attempt: string }, write: Write) {
    this.#modelCall = modelCall;
    // Bound to the step's async context: a flush from a timer or a socket callback writes as the step.
    this.#write = AsyncLocalStorage.bind(write);
  }

  add(update: AgentRunResponseUpdate): void {
    if (this.#pending && mergeable(this.#pending, update)) this.#pending = merged(this.#pending, update);
    else {
      this.#flush();
      this.#pending = { ...update, contents: [...update.contents] };
    }
    this.#chars += update.text.length + (update.toolCallDelta?.argumentsDelta.length ?? 0);
    if (this.#chars >= DELTA_FLUSH_CHARS) this.#flush();
    else this.#timer ??= setTimeout(() => this.#flush(), DELTA_FLUSH_MS);
  }

  /**
   * Writes what is pending and waits for every write. An attempt that streamed nothing still
   * writes its `first` marker, so a reader drops what an earlier attempt showed.
   */
  async close(): Promise<void> {
    this.#flush();
    if (!this.#written) this.#enqueue({ text: '', contents: [], role: 'assistant' });
    await this.#chain;
    if (this.#failure) throw this.#failure.error;
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#chars = 0;
    const entry = this.#pending;
    this.#pending = undefined;
    if (entry) this.#enqueue(entry);
  }

  #enqueue(entry: AgentRunResponseUpdate): void {
    const modelCall: DurableModelCall = this.#written ? this.#modelCall : { ...this.#modelCall, first: true };
    this.#written = true;
    this.#chain = this.#chain.then(() => (this.#failure ? undefined : this.#write({ ...entry, modelCall }))).catch((error: unknown) => void (this.#failure ??= { error }));
  }
}

/** Same message, and either contents after contents or more arguments of the same tool call. */
function mergeable(pending: AgentRunResponseUpdate, update: AgentRunResponseUpdate): boolean {
  if (pending.role !== update.role || pending.messageId !== update.messageId || pending.responseId !== update.responseId || pending.authorName !== update.authorName) return false;
  if (!pending.toolCallDelta && !update.toolCallDelta) return true;
  return pending.toolCallDelta?.index === update.toolCallDelta?.index && update.contents.length === 0;
}

function merged(pending: AgentRunResponseUpdate, update: AgentRunResponseUpdate): AgentRunResponseUpdate {
  const contents = pending.contents;
  for (const c of update.contents) {
    const last = contents[contents.length - 1];
    if (c.kind === 'text' && last?.kind === 'text') contents[contents.length - 1] = { ...last, text: last.text + c.text };
    else contents.push(c);
  }
  const out: AgentRunResponseUpdate = { ...pending, text: pending.text + update.text, contents };
  if (pending.toolCallDelta && update.toolCallDelta) {
    const { callId, name } = pending.toolCallDelta;
    out.toolCallDelta = { ...update.toolCallDelta, ...(callId !== undefined ? { callId } : {}), ...(name !== undefined ? { name } : {}), argumentsDelta: pending.toolCallDelta.argumentsDelta + update.toolCallDelta.argumentsDelta };
  }
  return out;
}
