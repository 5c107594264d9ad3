import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { createHash, randomUUID } from 'node:crypto';
import { ConfigurationError, SerialByKey } from 'skein';
import { TaskState } from './a2a-peers.js';
import { agentMessage, textPart } from './a2a-mapping.js';
import { type A2AServerLogger, defaultA2AServerLogger } from './skein-agent-executor.js';

export interface TaskLeaseOptions {
  /** How long a lease lasts without renewal, in ms (default 30 000). */
  leaseMs?: number;
  /** How often the instance running a task renews its lease, in ms (default 10 000); below `leaseMs`. */
  renewIntervalMs?: number;
  /** This instance's id in the leases it writes (default: a random UUID per store). Never shown to clients. */
  instanceId?: string;
  /** Where a lost task is reported (with its error id); the server's logger by default. */
  logger?: A2AServerLogger;
  /**
   * Called once this instance has saved a lost task `failed` (A2AServer sends the push
   * notifications from here). Instances failing one task together may each call it.
   */
  onLost?: (task: Task, context: ServerCallContext) => void;
  /**
   * Called when a renewal finds that a task this instance runs was moved on elsewhere (canceled
   * through another instance, or failed as lost while this one stalled), with the task as stored:
   * A2AServer stops the agent run there.
   */
  onMovedOn?: (task: Task) => void;
  /**
   * Renews leases in one atomic step: `sdkDatabaseLeaseRenewal(db)` for the SDK's
   * `DatabaseTaskStore` on PostgreSQL. Default: the wrapped store's own `renewTaskLease` when it
   * has one (`PostgresTaskStore`), else a load then a save.
   */
  renewal?: TaskLeaseRenewal;
}

/** Where the lease lives: a key of the task's metadata, stripped from every task this store returns. */
export const TASK_LEASE_METADATA_KEY = 'skein.lease';
/** The `metadata.reason` of the failed status a lost task gets. */
export const INSTANCE_LOST_REASON = 'instance-lost';
export const DEFAULT_TASK_LEASE_MS = 30_000;
export const DEFAULT_TASK_LEASE_RENEW_MS = 10_000;

/**
 * Renews a lease in one atomic step (Skein's `PostgresTaskStore`, `sdkDatabaseLeaseRenewal`): only while
 * the stored task is still running under this instance's lease, so a renewal can never undo a
 * cancel written by another instance at the same moment. Other stores get a load, then a save.
 */
export interface TaskLeaseRenewal {
  /** Sets the lease's expiry when the stored task is running under `instance`'s lease; false when it is not (any more). */
  renewTaskLease(taskId: string, instance: string, expiresAt: number, context: ServerCallContext): Promise<boolean>;
}

interface Lease {
  instance: string;
  /** Epoch ms on the holder's clock. */
  expiresAt: number;
}

interface Held {
  /** The latest task this instance saved: a renewal writes it again with a later expiry. */
  task: Task;
  context: ServerCallContext;
}

/**
 * A `TaskStore` wrapper that gives each running task a lease, so a task whose server process died
 * does not stay `working` forever. The instance running a task (the one saving it `submitted` or
 * `working`) stamps a lease (its instance id and an expiry) into the task's metadata and renews
 * it on a timer; any instance that reads a running task whose lease expired (GetTask, ListTasks,
 * SubscribeToTask, a message continuing it, CancelTask) saves it `failed` with a status message
 * the caller can act on (`metadata.reason` `instance-lost`, an error id), so every instance then
 * sees the same. It works over any store (Skein's `PostgresTaskStore`, the SDK's
 * `DatabaseTaskStore`, in memory); `A2AServer` wraps its `taskStore` in one.
 *
 * Leases compare the holder's clock with the reader's: keep the instances' clocks in step to well
 * within the lease length.
 *
 * @example
 * const taskStore = new LeasedTaskStore(new PostgresTaskStore({ connectionString }), { leaseMs: 30_000, renewIntervalMs: 10_000 });
 */
export class LeasedTaskStore implements TaskStore {
  readonly instanceId: string;
  readonly leaseMs: number;
  readonly renewIntervalMs: number;
  readonly #inner: TaskStore;
  readonly #logger: A2AServerLogger;
  readonly #onLost: TaskLeaseOptions['onLost'];
  readonly #onMovedOn: TaskLeaseOptions['onMovedOn'];
  readonly #renewal: TaskLeaseRenewal | undefined;
  readonly #held = new Map<string, Held>();
  /** Per task: this instance's writes in order, so a renewal never lands between two saves out of order. */
  readonly #writes = new SerialByKey();
  #timer: NodeJS.Timeout | undefined;

  constructor(inner: TaskStore, options: TaskLeaseOptions = {}) {
    if (!inner || typeof inner.load !== 'function') throw new TypeError('LeasedTaskStore needs the task store to wrap, e.g. new LeasedTaskStore(new PostgresTaskStore({ connectionString })).');
    this.leaseMs = options.leaseMs ?? DEFAULT_TASK_LEASE_MS;
    this.renewIntervalMs = options.renewIntervalMs ?? Math.min(DEFAULT_TASK_LEASE_RENEW_MS, Math.floor(this.leaseMs / 3));
    if (!Number.isFinite(this.leaseMs) || this.leaseMs <= 0) {
      throw new ConfigurationError(`Task lease: leaseMs must be a positive number of milliseconds, found ${String(options.leaseMs)}.`);
    }
    if (!Number.isFinite(this.renewIntervalMs) || this.renewIntervalMs <= 0 || this.renewIntervalMs >= this.leaseMs) {
      throw new ConfigurationError(
        `Task lease: renewIntervalMs must be positive and below leaseMs (${this.leaseMs}), found ${String(options.renewIntervalMs)}; renew at most every third of the lease, e.g. { leaseMs: 30000, renewIntervalMs: 10000 }.`,
      );
    }
    this.instanceId = options.instanceId ?? randomUUID();
    this.#inner = inner;
    this.#logger = options.logger ?? defaultA2AServerLogger;
    this.#onLost = options.onLost;
    this.#onMovedOn = options.onMovedOn;
    const own = inner as Partial<TaskLeaseRenewal>;
    this.#renewal = options.renewal ?? (typeof own.renewTaskLease === 'function' ? (inner as TaskStore & TaskLeaseRenewal) : undefined);
  }

  /** The store this one wraps. */
  get inner(): TaskStore {
    return this.#inner;
  }

  save(task: Task, context: ServerCallContext): Promise<void> {
    if (isRunning(task)) {
      this.#held.set(task.id, { task, context });
      this.#startTimer();
    } else {
      this.#held.delete(task.id);
    }
    return this.#serial(task.id, () => this.#inner.save(isRunning(task) ? this.#stamped(task) : withoutLease(task), context));
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const task = await this.#inner.load(taskId, context);
    return task && this.#checked(task, context);
  }

  /** Lost tasks in the page come back `failed` (and are dropped when the caller filtered on another state). */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const page = await this.#inner.list(params, context);
    const tasks: Task[] = [];
    for (const task of page.tasks) {
      if (!isExpired(task)) {
        tasks.push(withoutLease(task));
        continue;
      }
      // A page may leave out artifacts and history: fail the whole stored task, show the page's view of it.
      const full = await this.load(task.id, context);
      if (!full) continue;
      if (params.status && full.status?.state !== params.status) continue;
      tasks.push({ ...full, artifacts: params.includeArtifacts ? full.artifacts : task.artifacts, history: task.history });
    }
    return { ...page, tasks };
  }

  /** Stops renewing (the leases this instance holds then expire). */
  close(): void {
    this.#held.clear();
    this.#stopTimer();
  }

  async #checked(task: Task, context: ServerCallContext): Promise<Task> {
    // A task this instance runs, read back final or waiting: another instance moved it on (this one's own final save releases it first).
    if (!isRunning(task) && this.#held.delete(task.id)) this.#onMovedOn?.(withoutLease(task));
    const lease = leaseOf(task);
    if (!lease || !isRunning(task) || lease.expiresAt > Date.now()) return withoutLease(task);
    const failed = lostTask(task, lease);
    const errorId = (failed.status?.message?.metadata as { errorId?: string } | undefined)?.errorId;
    // Same lease, same failed task (ids and time derive from it): instances failing it together write the same thing.
    await this.#serial(task.id, () => this.#inner.save(failed, context));
    // This instance held it (it stalled past its own lease): its run stops as for any task moved on.
    if (this.#held.delete(task.id)) this.#onMovedOn?.(failed);
    this.#logger.error(
      `A2A task ${task.id} (context ${task.contextId}) was running on instance ${lease.instance}, which stopped renewing its lease (expired ${new Date(lease.expiresAt).toISOString()}); marked failed; error id ${errorId}:`,
      new Error('task lease expired'),
    );
    this.#onLost?.(failed, context);
    return failed;
  }

  #stamped(task: Task): Task {
    const lease: Lease = { instance: this.instanceId, expiresAt: Date.now() + this.leaseMs };
    return { ...task, metadata: { ...(task.metadata ?? {}), [TASK_LEASE_METADATA_KEY]: lease } };
  }

  async #renew(): Promise<void> {
    for (const [taskId, held] of [...this.#held]) {
      await this.#serial(taskId, async () => {
        if (this.#held.get(taskId) !== held) return; // saved again meanwhile (with a fresh lease), or released
        if (this.#renewal) {
          if (await this.#renewal.renewTaskLease(taskId, this.instanceId, Date.now() + this.leaseMs, held.context)) return;
          this.#release(taskId, held);
          const stored = await this.#inner.load(taskId, held.context);
          if (stored && !isRunning(stored)) this.#onMovedOn?.(withoutLease(stored));
          return;
        }
        // Not atomic: a write by another instance between this load and save is overwritten (a window of one round trip).
        const stored = await this.#inner.load(taskId, held.context);
        // Someone else moved it on (canceled it, failed it, took it over): the lease is not ours to extend.
        if (!stored || !isRunning(stored) || leaseOf(stored)?.instance !== this.instanceId) {
          this.#release(taskId, held);
          if (stored && !isRunning(stored)) this.#onMovedOn?.(withoutLease(stored));
          return;
        }
        await this.#inner.save(this.#stamped(held.task), held.context);
      }).catch((error: unknown) => {
        // The next tick tries again; the lease covers a few missed renewals.
        this.#logger.warn(`A2A task ${taskId}: renewing its lease failed: ${error instanceof Error ? error.message : String(error)}`);
      });
    }
    if (this.#held.size === 0) this.#stopTimer();
  }

  /** Stops holding a task, unless a newer save holds it again meanwhile. */
  #release(taskId: string, held: Held): void {
    if (this.#held.get(taskId) === held) this.#held.delete(taskId);
  }

  #startTimer(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.#renew(), this.renewIntervalMs);
    // Renewing must not keep a process alive that has nothing else to do.
    this.#timer.unref();
  }

  #stopTimer(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #serial(taskId: string, work: () => Promise<void>): Promise<void> {
    return this.#writes.run(taskId, work);
  }
}

function isRunning(task: Task): boolean {
  const state = task.status?.state;
  return state === TaskState.TASK_STATE_WORKING || state === TaskState.TASK_STATE_SUBMITTED;
}

function isExpired(task: Task): boolean {
  const lease = leaseOf(task);
  return lease !== undefined && isRunning(task) && lease.expiresAt <= Date.now();
}

function leaseOf(task: Task): Lease | undefined {
  const value: unknown = task.metadata?.[TASK_LEASE_METADATA_KEY];
  if (typeof value !== 'object' || value === null) return undefined;
  const { instance, expiresAt } = value as Partial<Lease>;
  return typeof instance === 'string' && typeof expiresAt === 'number' ? { instance, expiresAt } : undefined;
}

function withoutLease(task: Task): Task {
  if (!task.metadata || !(TASK_LEASE_METADATA_KEY in task.metadata)) return task;
  const { [TASK_LEASE_METADATA_KEY]: _lease, ...metadata } = task.metadata;
  return { ...task, metadata: Object.keys(metadata).length > 0 ? metadata : undefined };
}

/** The failed task a lost one becomes; its ids and time derive from the lease, so it is the same on every instance. */
function lostTask(task: Task, lease: Lease): Task {
  const errorId = derivedUuid(`${task.id}|${lease.instance}|${lease.expiresAt}|error`);
  const message = agentMessage(
    [textPart(`The server instance running this task stopped; send your message again (error id ${errorId}).`)],
    { contextId: task.contextId, taskId: task.id },
  );
  message.messageId = derivedUuid(`${task.id}|${lease.instance}|${lease.expiresAt}|message`);
  message.metadata = { errorId, reason: INSTANCE_LOST_REASON };
  const base = withoutLease(task);
  return {
    ...base,
    status: { state: TaskState.TASK_STATE_FAILED, message, timestamp: new Date(lease.expiresAt).toISOString() },
    history: [...(base.history ?? []), message],
  };
}

function derivedUuid(seed: string): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
