import { type AgentThread, type JsonObject, SerializationError } from 'skein';

/** What `thread.state.a2a` holds while the remote waits for this client's input on a task. */
export interface A2AOpenTask {
  taskId: string;
  /** Artifacts the task had already produced; they are not part of the next turn's answer. */
  artifactIds: string[];
  /** The input-required status (state, time, message id), so a stale snapshot of it is not taken for a new answer. */
  status?: string;
}

/** The open task a thread's state holds (`state.a2a`), checked; `path` names it in a SerializationError. */
export function readOpenTask(state: JsonObject, path: string): A2AOpenTask | undefined {
  const value = state.a2a;
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new SerializationError(path, 'expected an object { taskId, artifactIds }.');
  const { taskId, artifactIds, status } = value as Record<string, unknown>;
  if (typeof taskId !== 'string' || taskId === '') throw new SerializationError(`${path}.taskId`, 'expected the open task id, a non-empty string.');
  if (!Array.isArray(artifactIds) || !artifactIds.every((id) => typeof id === 'string')) {
    throw new SerializationError(`${path}.artifactIds`, 'expected an array of artifact id strings.');
  }
  if (status !== undefined && typeof status !== 'string') throw new SerializationError(`${path}.status`, 'expected a string or nothing.');
  return status === undefined ? { taskId, artifactIds: artifactIds as string[] } : { taskId, artifactIds: artifactIds as string[], status };
}

/** Records the task the remote waits on in the thread's state, or clears it. */
export function setOpenTask(thread: AgentThread, open: A2AOpenTask | undefined): void {
  const { a2a: _previous, ...rest } = thread.state;
  if (!open) {
    thread.state = rest;
    return;
  }
  const a2a: JsonObject = { taskId: open.taskId, artifactIds: open.artifactIds };
  if (open.status !== undefined) a2a.status = open.status;
  thread.state = { ...rest, a2a };
}
