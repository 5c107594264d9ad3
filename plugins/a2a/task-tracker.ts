import type { Artifact, Message, SendMessageResult, StreamResponse, Task, TaskStatus } from '@a2a-js/sdk';
import type { TaskState } from '@a2a-js/sdk';
import type { AIContent } from 'skein';
import { isFinalState, partsText, toContents } from './a2a-mapping.js';

/**
 * Follows one A2A exchange (a direct message, or a task through its snapshots, status and
 * artifact events) and reports the content it adds as it arrives.
 */
export class TaskTracker {
  contextId: string | undefined;
  taskId: string | undefined;
  state: TaskState | undefined;
  status: TaskStatus | undefined;
  message: Message | undefined;
  readonly #artifacts = new Map<string, Artifact>();
  readonly #seen: ReadonlySet<string>;
  readonly #onContents: ((contents: AIContent[]) => void) | undefined;
  readonly #staleStatus: string | undefined;

  /**
   * `previous`: what the open task looked like when it asked for input. Its artifacts are not
   * this turn's answer, and its input-required status, seen again in a snapshot taken before the
   * remote picked up the answer, does not end this turn.
   */
  constructor(previous: { artifactIds: readonly string[]; status?: string } | undefined, onContents?: (contents: AIContent[]) => void) {
    this.#seen = new Set(previous?.artifactIds ?? []);
    this.#staleStatus = previous?.status;
    this.#onContents = onContents;
  }

  /** A direct message or a task in a state the remote will not leave on its own. */
  get done(): boolean {
    return this.message !== undefined || isFinalState(this.state);
  }

  applyResult(result: SendMessageResult): void {
    if ('messageId' in result) this.#applyMessage(result);
    else this.applyTask(result);
  }

  applyEvent(event: StreamResponse): void {
    const payload = event.payload;
    if (!payload) return;
    switch (payload.$case) {
      case 'message':
        this.#applyMessage(payload.value);
        break;
      case 'task':
        this.applyTask(payload.value);
        break;
      case 'statusUpdate':
        this.#ids(payload.value.contextId, payload.value.taskId);
        this.#applyStatus(payload.value.status);
        break;
      case 'artifactUpdate': {
        this.#ids(payload.value.contextId, payload.value.taskId);
        const incoming = payload.value.artifact;
        if (incoming) this.#applyArtifact(incoming, payload.value.append);
        break;
      }
    }
  }

  /** A full task snapshot (first stream event, a poll, a non-streaming reply): artifacts are replaced. */
  applyTask(task: Task): void {
    this.#ids(task.contextId, task.id);
    for (const a of task.artifacts ?? []) {
      const known = this.#artifacts.get(a.artifactId);
      // A snapshot may arrive after streamed chunks; emit only what the chunks did not carry.
      if (!this.#seen.has(a.artifactId)) this.#emit(known ? textBeyond(known, a) : toContents(a.parts));
      this.#artifacts.set(a.artifactId, a);
    }
    this.#applyStatus(task.status);
  }

  /** This turn's answer: the new artifacts' parts, then the final status message (a question, a note). */
  contents(): AIContent[] {
    if (this.message) return toContents(this.message.parts);
    const out: AIContent[] = [];
    for (const [id, a] of this.#artifacts) if (!this.#seen.has(id)) out.push(...toContents(a.parts));
    const statusMessage = this.status?.message;
    if (statusMessage && isFinalState(this.state)) out.push(...toContents(statusMessage.parts));
    return out;
  }

  /** Every artifact id the task has now, for the next turn on the same task. */
  artifactIds(): string[] {
    return [...new Set([...this.#seen, ...this.#artifacts.keys()])];
  }

  statusText(): string | undefined {
    const text = partsText(this.status?.message?.parts);
    return text === '' ? undefined : text;
  }

  #applyMessage(message: Message): void {
    this.#ids(message.contextId, message.taskId);
    this.message = message;
    this.#emit(toContents(message.parts));
  }

  /** Identifies a status, so the same one seen twice is recognised. */
  statusMarker(): string | undefined {
    return this.status && statusMarker(this.status);
  }

  #applyStatus(status: TaskStatus | undefined): void {
    if (!status) return;
    if (this.#staleStatus !== undefined && statusMarker(status) === this.#staleStatus) return;
    const wasFinal = isFinalState(this.state);
    this.status = status;
    this.state = status.state;
    if (!wasFinal && isFinalState(status.state) && status.message) this.#emit(toContents(status.message.parts));
  }

  #applyArtifact(incoming: Artifact, append: boolean): void {
    const known = this.#artifacts.get(incoming.artifactId);
    if (append && known) {
      this.#artifacts.set(incoming.artifactId, { ...known, parts: [...known.parts, ...incoming.parts] });
      this.#emit(toContents(incoming.parts));
      return;
    }
    // A replacement: emit only the text beyond what was already streamed, so deltas never repeat.
    this.#emit(known ? textBeyond(known, incoming) : toContents(incoming.parts));
    this.#artifacts.set(incoming.artifactId, incoming);
  }

  #ids(contextId: string | undefined, taskId: string | undefined): void {
    if (contextId) this.contextId = contextId;
    if (taskId) this.taskId = taskId;
  }

  #emit(contents: AIContent[]): void {
    if (contents.length > 0) this.#onContents?.(contents);
  }
}

function statusMarker(status: TaskStatus): string {
  return `${status.state}|${status.timestamp ?? ''}|${status.message?.messageId ?? ''}`;
}

function textBeyond(known: Artifact, next: Artifact): AIContent[] {
  const before = partsText(known.parts);
  const after = partsText(next.parts);
  if (after.startsWith(before) && after.length > before.length) return [{ kind: 'text', text: after.slice(before.length) }];
  if (after.startsWith(before)) return [];
  return toContents(next.parts);
}
