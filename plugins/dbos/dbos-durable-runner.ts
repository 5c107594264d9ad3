import type { Observable } from 'rxjs';
import { Observable as RxObservable } from 'rxjs/internal/Observable';
import {
  type AgentInput,
  type AgentThread,
  type ChatAgent,
  type ChatMessage,
  ConfigurationError,
  type DurableAgent,
  type DurableAgentOptions,
  type DurableChatOptions,
  DurableEngineUnavailableError,
  DurableRunCancelledError,
  DurableRunError,
  DurableRunNotFoundError,
  type DurableRunResult,
  type DurableRunner,
  type DurableRunUpdate,
  DurableRunVersionError,
  type DurableRunWaiting,
  type DurableStartOptions,
  type FunctionApprovalRequestContent,
  type FunctionApprovalResponseContent,
  type JsonObject,
  SkeinError,
  type UsageDetails,
  addUsage,
  fromErrorRecord,
  isErrorRecord,
  toErrorRecord,
  toMessages,
} from 'skein';
import { DBOS, DbosErrors, pg } from './dbos-peers.js';
import { OutageMonitor, isConnectionFailure } from './dbos-outage.js';
import { DbosRunSteps, type DurableTurn, redacted } from './dbos-run-steps.js';
import { UPDATES_STREAM, toStreamUpdate } from './dbos-stream.js';

/** A DBOS queue: runs wait there until a worker may take them under these limits. */
export interface DurableQueueOptions {
  /** Runs of this queue at once, over every worker. */
  concurrency?: number;
  /** Runs of this queue at once in one worker process. */
  workerConcurrency?: number;
  /** At most `limit` runs started per `periodSec` seconds (e.g. requests per minute for a model). */
  rateLimit?: { limit: number; periodSec: number };
  /** Runs at once per partition key (e.g. 1 per thread, so two runs on one thread never overlap). */
  partitionConcurrency?: number;
}

export interface DbosRunnerOptions {
  /** PostgreSQL URL of DBOS's system database (created when missing). */
  systemDatabaseUrl: string;
  /** The schema of DBOS's tables in that database. Default `dbos`. */
  schema?: string;
  /** The DBOS application name: scopes runs and queues. Default `skein`. */
  name?: string;
  /**
   * The application version runs are recorded with. Default: DBOS's hash of the registered
   * workflow code. A process replays only runs of its own version.
   */
  applicationVersion?: string;
  queues?: Readonly<Record<string, DurableQueueOptions>>;
  /**
   * This worker's id, stable across its restarts: a process launching with an id recovers the
   * runs a dead process of the same id left. Default DBOS's (`local`, or DBOS__VMID): then every
   * worker recovers every unfinished run on launch, even those another live worker is running.
   */
  executorId?: string;
  /** DBOS's log level. Default `warn`. */
  logLevel?: string;
  /** How often waiting calls poll the database, in ms (DBOS's default when unset). */
  pollingIntervalMs?: number;
  /**
   * How long a call of this runner (`start`, `getRun`, `approve`, ...) waits while the system
   * database cannot be reached before it fails with `DurableEngineUnavailableError`. Default 30 000.
   * DBOS itself keeps retrying: runs in flight pause and go on when the database is back.
   */
  outageTimeoutMs?: number;
}

const WAITING_EVENT = 'skein.waiting';
/** DBOS statuses of a run that has ended: cancelling it changes nothing. */
const ENDED: ReadonlySet<string> = new Set(['SUCCESS', 'ERROR', 'CANCELLED']);
const DEFAULT_OUTAGE_TIMEOUT_MS = 30_000;
const APPROVAL_TOPIC = 'skein.approval';
/** recv waits this long per round; the wait itself has no limit (a run may wait for days). */
const APPROVAL_WAIT_SECONDS = 24 * 60 * 60;

interface WorkflowInput {
  input: ChatMessage[];
  thread?: JsonObject;
  /** The run's own options (DurableStartOptions), for every turn. */
  chatOptions?: DurableChatOptions;
  additionalInstructions?: string;
}

interface WorkflowOutput {
  messages: ChatMessage[];
  usage?: UsageDetails;
  thread: JsonObject;
}

interface ApprovalMessage {
  callId: string;
  approved: boolean;
  reason?: string;
}

interface Registered {
  agent: ChatAgent;
  options: DurableAgentOptions;
  start: (input: WorkflowInput) => Promise<WorkflowOutput>;
}

/**
 * Durable runs on DBOS Transact: each run a workflow in PostgreSQL, recovered by the next
 * process that launches. DBOS is one per process, so is this runner.
 *
 * @example
 * ```ts
 * const runner = new DbosDurableRunner({ systemDatabaseUrl: 'postgres://postgres@127.0.0.1:5432/app' });
 * const durable = runner.durable(agent);
 * await runner.launch();
 * const result = await durable.run('Research this', { thread });
 * ```
 */
export class DbosDurableRunner implements DurableRunner {
  readonly engine = 'dbos';
  readonly #options: DbosRunnerOptions;
  readonly #agents = new Map<string, Registered>();
  readonly #outage: OutageMonitor;
  #launched = false;

  constructor(options: DbosRunnerOptions) {
    if (!options?.systemDatabaseUrl) throw new ConfigurationError('DbosDurableRunner needs systemDatabaseUrl, e.g. postgres://postgres@127.0.0.1:5432/app.');
    this.#options = options;
    this.#outage = new OutageMonitor(options.systemDatabaseUrl, options.outageTimeoutMs ?? DEFAULT_OUTAGE_TIMEOUT_MS);
  }

  durable(agent: ChatAgent, options: DurableAgentOptions = {}): DurableAgent {
    if (options.engine !== undefined && options.engine !== this.engine) {
      throw new ConfigurationError(`Expected durability engine "${this.engine}" for agent "${agent.name ?? '(unnamed)'}", found "${options.engine}".`);
    }
    if (this.#launched) throw new ConfigurationError(`Make agent "${agent.name ?? '(unnamed)'}" durable before launch(): DBOS registers workflows only before it starts.`);
    const key = agent.name ?? 'agent';
    if (this.#agents.has(key)) throw new ConfigurationError(`An agent named "${key}" is already durable on this runner; give each durable agent its own name.`);
    if (options.queue !== undefined && !this.#options.queues?.[options.queue]) throw unknownQueue(options.queue, this.#options.queues);
    const entry = { agent, options } as Registered;
    entry.start = DBOS.registerWorkflow((input: WorkflowInput) => this.#execute(entry, input).catch(recordingSkeinError), { name: `skein.run.${key}` });
    this.#agents.set(key, entry);
    return {
      agent,
      start: (input, startOptions) => this.#start(entry, input, startOptions),
      run: async (input, startOptions) => this.getRun(await this.#start(entry, input, startOptions)),
    };
  }

  async launch(): Promise<void> {
    if (this.#launched) return;
    const { systemDatabaseUrl, schema = 'dbos', name = 'skein', applicationVersion, executorId, logLevel = 'warn' } = this.#options;
    DBOS.setConfig({ name, systemDatabaseUrl, systemDatabaseSchemaName: schema, applicationVersion, executorID: executorId, logLevel });
    await this.#call(undefined, () => withLaunchLock(systemDatabaseUrl, schema, () => DBOS.launch()));
    this.#launched = true;
    for (const [queue, limits] of Object.entries(this.#options.queues ?? {})) {
      await this.#call(undefined, () => DBOS.registerQueue(queue, toQueueParameters(limits)));
    }
  }

  async shutdown(): Promise<void> {
    if (!this.#launched) return;
    this.#launched = false;
    await DBOS.shutdown();
  }

  async getRun(runId: string): Promise<DurableRunResult> {
    this.#assertLaunched();
    await this.#checkRunnable(runId);
    const output = await this.#call(runId, () => DBOS.retrieveWorkflow<WorkflowOutput>(runId).getResult(this.#polling()));
    return toResult(runId, output);
  }

  /**
   * Under `outageTimeoutMs` like every call: a reader whose system database stays unreachable
   * gets `DurableEngineUnavailableError` and may read on with `after` = the last offset it got.
   */
  runStream(runId: string, options: { after?: number } = {}): Observable<DurableRunUpdate> {
    return new RxObservable<DurableRunUpdate>((subscriber) => {
      let offset = (options.after ?? -1) + 1;
      const stream = DBOS.readStream<DurableRunUpdate>(runId, UPDATES_STREAM, { offset, ...this.#polling() });
      const done = new AbortController();
      const fail = (error: unknown) => {
        done.abort();
        if (!subscriber.closed) subscriber.error(error);
      };
      this.#outage.watch(done.signal).catch((error: unknown) =>
        fail(unavailable(runId, this.#outageTimeoutMs(), error, `Read on when it is back: runStream("${runId}", { after: ${offset - 1} }) (the last offset this reader got).`)),
      );
      (async () => {
        this.#assertLaunched();
        for await (const update of stream) {
          if (subscriber.closed) return;
          subscriber.next({ ...update, offset: offset++ });
        }
        done.abort();
        subscriber.complete();
      })().catch((error: unknown) => fail(toEngineError(runId, error)));
      return () => {
        done.abort();
        // A read stuck in DBOS's retries ends once the database is back.
        void stream.return(undefined).catch(() => {});
      };
    });
  }

  async getWaiting(runId: string): Promise<DurableRunWaiting | undefined> {
    this.#assertLaunched();
    const waiting = await this.#call(runId, () => DBOS.getEvent<DurableRunWaiting | null>(runId, WAITING_EVENT, 0));
    return waiting ?? undefined;
  }

  async approve(runId: string, callId: string, approved: boolean, reason?: string): Promise<void> {
    this.#assertLaunched();
    const message: ApprovalMessage = reason === undefined ? { callId, approved } : { callId, approved, reason };
    // Keyed by run and call: answering twice (a retried web request) delivers one answer.
    await this.#call(runId, () => DBOS.send(runId, message, APPROVAL_TOPIC, `${runId}:${callId}`));
  }

  async cancelRun(runId: string): Promise<boolean> {
    this.#assertLaunched();
    if (ENDED.has((await this.#status(runId)).status)) return false;
    await this.#call(runId, () => DBOS.cancelWorkflow(runId));
    // DBOS leaves a run that finished meanwhile as it ended: only then was there nothing to stop.
    return (await this.#status(runId)).status === 'CANCELLED';
  }

  async #start(entry: Registered, input: AgentInput, options: DurableStartOptions = {}): Promise<string> {
    this.#assertLaunched();
    const queue = options.queue ?? entry.options.queue;
    if (queue !== undefined && !this.#options.queues?.[queue]) throw unknownQueue(queue, this.#options.queues);
    if (options.partitionKey !== undefined && (queue === undefined || !this.#options.queues?.[queue]?.partitionConcurrency)) {
      throw new ConfigurationError(`A partitionKey needs a queue with partitionConcurrency; found queue ${queue === undefined ? 'none' : `"${queue}" without it`}.`);
    }
    if (options.thread) entry.agent.assertCompatible(options.thread);
    // Made here, not in the workflow: a new thread's store key is random, and a replay must find the same one.
    const thread = options.thread ?? entry.agent.getNewThread();
    const workflowInput: WorkflowInput = { input: stamped(input), thread: (await thread.serialize()) as unknown as JsonObject, ...runOptionsOf(options) };
    const handle = await this.#call(options.runId, () =>
      DBOS.startWorkflow(entry.start, {
        workflowID: options.runId,
        queueName: queue,
        timeoutMS: options.timeoutMs,
        enqueueOptions: options.partitionKey !== undefined ? { queuePartitionKey: options.partitionKey } : undefined,
      })(workflowInput),
    );
    return handle.workflowID;
  }

  /** The workflow: turns until the agent answers without asking for approval, waiting for the answers in between. */
  async #execute(entry: Registered, workflowInput: WorkflowInput): Promise<WorkflowOutput> {
    const runId = DBOS.workflowID!;
    const { agent, options } = entry;
    const unrecordedTools = new Set(options.unrecordedTools ?? []);
    const streamMode = options.stream === false ? 'off' : options.streamDeltas === false ? 'messages' : 'deltas';
    const stream = streamMode !== 'off';
    const thread = workflowInput.thread ? await agent.deserializeThread(workflowInput.thread) : agent.getNewThread();
    const messages: ChatMessage[] = [];
    let usage: UsageDetails | undefined;
    let input: ChatMessage[] = workflowInput.input;
    for (let turn = 0; ; turn++) {
      const steps = new DbosRunSteps({ runId, turn, unrecordedTools, stream: streamMode, agentName: agent.name });
      const runOptions = { thread, steps, ...(workflowInput.chatOptions ? { chatOptions: workflowInput.chatOptions } : {}), ...(workflowInput.additionalInstructions ? { additionalInstructions: workflowInput.additionalInstructions } : {}) };
      const response = streamMode === 'deltas' ? await runStreamed(agent, input, runOptions) : await agent.run(input, runOptions);
      messages.push(...response.messages);
      usage = addUsage(usage, response.usage);
      const requests = response.approvalRequests;
      if (requests.length === 0) break;
      const waiting: DurableRunWaiting = { approvalRequests: requests, thread: (await thread.serialize()) as unknown as JsonObject };
      await DBOS.setEvent(WAITING_EVENT, waiting);
      if (stream) await DBOS.writeStream(UPDATES_STREAM, toStreamUpdate({ role: 'assistant', contents: requests }));
      input = [{ role: 'user', contents: await waitForAnswers(requests) }];
      await DBOS.setEvent(WAITING_EVENT, null);
    }
    if (stream) await DBOS.closeStream(UPDATES_STREAM);
    // Results of unrecorded tools stay out of the run's recorded output; the thread has them.
    const recorded = unrecordedTools.size ? redactUnrecorded(messages, unrecordedTools) : messages;
    return { messages: recorded, usage, thread: (await thread.serialize()) as unknown as JsonObject };
  }

  /** Fails fast instead of waiting forever on a run no process of this version will run. */
  async #checkRunnable(runId: string): Promise<void> {
    const status = await this.#status(runId);
    if ((status.status === 'PENDING' || status.status === 'ENQUEUED') && status.applicationVersion && status.applicationVersion !== DBOS.applicationVersion) {
      throw new DurableRunVersionError(runId, status.applicationVersion, DBOS.applicationVersion);
    }
  }

  async #status(runId: string) {
    const status = await this.#call(runId, () => DBOS.getWorkflowStatus(runId));
    if (!status) throw new DurableRunNotFoundError(runId, `No durable run has id "${runId}" in this system database (schema "${this.#options.schema ?? 'dbos'}").`);
    return status;
  }

  /**
   * An engine call, failing with DurableEngineUnavailableError when the system database stays
   * unreachable for outageTimeoutMs: DBOS retries a lost connection forever, so without this a
   * caller would hang through an outage with no word of it.
   */
  #call<T>(runId: string | undefined, call: () => Promise<T>): Promise<T> {
    const done = new AbortController();
    const pending = engineCall(runId, call);
    const outage = this.#outage.watch(done.signal).catch((error: unknown) => {
      throw unavailable(runId, this.#outageTimeoutMs(), error, 'This call may still take effect then (start again with the same runId, or getRun, to find out).');
    });
    // The call goes on in the background after an outage error: its own failure is not the caller's any more.
    pending.catch(() => {});
    return Promise.race([pending, outage]).finally(() => done.abort());
  }

  #outageTimeoutMs(): number {
    return this.#options.outageTimeoutMs ?? DEFAULT_OUTAGE_TIMEOUT_MS;
  }

  #polling(): { pollingIntervalMs?: number } {
    return this.#options.pollingIntervalMs === undefined ? {} : { pollingIntervalMs: this.#options.pollingIntervalMs };
  }

  #assertLaunched(): void {
    if (!this.#launched) throw new ConfigurationError('The DBOS durable runner is not launched: call runner.launch() (after making every agent durable) first.');
  }
}

/**
 * The turn through agent.runStream, so each model call streams: its deltas go to the run's stream
 * from inside the model step (DbosRunSteps.observe), and the turn agent.run would return is
 * rebuilt from the steps (runStream returns none).
 */
/** A run's chatOptions and additionalInstructions as the workflow keeps them: plain JSON, checked before the run starts. */
function runOptionsOf(options: DurableStartOptions): Pick<WorkflowInput, 'chatOptions' | 'additionalInstructions'> {
  const { chatOptions, additionalInstructions } = options;
  if (additionalInstructions !== undefined && typeof additionalInstructions !== 'string') {
    throw new ConfigurationError(`A durable run's additionalInstructions must be a string; found ${typeof additionalInstructions}.`);
  }
  if (chatOptions !== undefined && (typeof chatOptions !== 'object' || chatOptions === null || Array.isArray(chatOptions) || 'signal' in chatOptions)) {
    throw new ConfigurationError(
      `A durable run's chatOptions must be a plain object without "signal" (it is kept with the run, and the run is cancelled with cancelRun); found ${chatOptions === null || Array.isArray(chatOptions) ? JSON.stringify(chatOptions) : typeof chatOptions === 'object' ? 'a signal' : typeof chatOptions}.`,
    );
  }
  return {
    ...(chatOptions !== undefined ? { chatOptions: JSON.parse(JSON.stringify(chatOptions)) as DurableChatOptions } : {}),
    ...(additionalInstructions ? { additionalInstructions } : {}),
  };
}

function runStreamed(agent: ChatAgent, input: ChatMessage[], options: { thread: AgentThread; steps: DbosRunSteps; chatOptions?: DurableChatOptions; additionalInstructions?: string }): Promise<DurableTurn> {
  return new Promise((resolve, reject) => {
    agent.runStream(input, options).subscribe({
      next: (update) => options.steps.observe(update),
      error: reject,
      complete: () => resolve(options.steps.turn()),
    });
  });
}

/** Receives answers until every request has one; answers to other calls are ignored. */
async function waitForAnswers(requests: readonly FunctionApprovalRequestContent[]): Promise<FunctionApprovalResponseContent[]> {
  const open = new Set(requests.map((r) => r.callId));
  const answers: FunctionApprovalResponseContent[] = [];
  while (open.size) {
    const message = await DBOS.recv<ApprovalMessage>(APPROVAL_TOPIC, APPROVAL_WAIT_SECONDS);
    if (!message || !open.delete(message.callId)) continue;
    answers.push({ kind: 'function-approval-response', callId: message.callId, approved: message.approved, ...(message.reason !== undefined ? { reason: message.reason } : {}) });
  }
  return answers;
}

/** The messages with the results of `unrecorded` tools replaced by a marker. */
function redactUnrecorded(messages: readonly ChatMessage[], unrecorded: ReadonlySet<string>): ChatMessage[] {
  const names = new Map<string, string>();
  for (const m of messages) for (const c of m.contents) if (c.kind === 'function-call') names.set(c.callId, c.name);
  const hidden = (c: ChatMessage['contents'][number]) => c.kind === 'function-result' && unrecorded.has(names.get(c.callId) ?? '');
  return messages.map((m) => (m.role === 'tool' && m.contents.some(hidden) ? { ...m, contents: m.contents.map((c) => (c.kind === 'function-result' && hidden(c) ? redacted(c) : c)) } : m));
}

function toResult(runId: string, output: WorkflowOutput | null): DurableRunResult {
  if (!output) throw new DurableRunError(runId, `Run "${runId}" ended without a result.`);
  let text = '';
  for (const m of output.messages) if (m.role === 'assistant') for (const c of m.contents) if (c.kind === 'text') text += c.text;
  return { runId, messages: output.messages, text, usage: output.usage, thread: output.thread };
}

function stamped(input: AgentInput): ChatMessage[] {
  const now = new Date().toISOString();
  if (typeof input === 'string') return [{ role: 'user', contents: [{ kind: 'text', text: input }], createdAt: now }];
  return toMessages(input).map((m) => (m.createdAt ? m : { ...m, createdAt: now }));
}

function toQueueParameters(limits: DurableQueueOptions) {
  return {
    globalConcurrency: limits.concurrency,
    workerConcurrency: limits.workerConcurrency,
    rateLimit: limits.rateLimit ? { limitPerPeriod: limits.rateLimit.limit, periodSec: limits.rateLimit.periodSec } : undefined,
    partitionConcurrency: limits.partitionConcurrency,
    onConflict: 'always_update' as const,
  };
}

function unknownQueue(queue: string, queues: DbosRunnerOptions['queues']): ConfigurationError {
  const known = Object.keys(queues ?? {});
  return new ConfigurationError(`Expected a queue configured on the DBOS runner, found "${queue}"; configured queues: ${known.length ? known.join(', ') : 'none'}. Add it to DbosRunnerOptions.queues.`);
}

/**
 * DBOS's first-time setup (migrations) is not safe when several processes launch at once on a
 * fresh system database: they were seen to deadlock (each CREATE INDEX CONCURRENTLY waits for
 * the other's open migration). A PostgreSQL advisory lock per schema lets
 * one process set up while the others wait, then they find the tables ready.
 */
async function withLaunchLock<T>(url: string, schema: string, body: () => Promise<T>): Promise<T> {
  const client = await connectForLock(url);
  const key = `skein.dbos.launch:${schema}`;
  try {
    // Polled, not waited for: a session blocked in pg_advisory_lock holds a snapshot, and DBOS's
    // CREATE INDEX CONCURRENTLY in the lock holder waits for every such snapshot (a silent deadlock).
    while (!(await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [key])).rows[0]!.locked) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return await body();
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]).catch(() => {});
    await client.end().catch(() => {});
  }
}

/** A connection for the lock; to the server's `postgres` database when the system database does not exist yet. */
async function connectForLock(url: string): Promise<InstanceType<typeof pg.Client>> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  try {
    await client.connect();
    return client;
  } catch (error) {
    if ((error as { code?: string }).code !== '3D000') throw error;
    const fallback = new URL(url);
    fallback.pathname = '/postgres';
    const admin = new pg.Client({ connectionString: fallback.toString() });
    admin.on('error', () => {});
    await admin.connect();
    return admin;
  }
}

/** Where the failure a run records carries its Skein error as plain data (see recordingSkeinError). */
const ERROR_RECORD_KEY = 'skeinErrorRecord';

/**
 * DBOS stores a failed workflow's error through serialize-error, which rebuilds a plain Error:
 * the class would be lost. A Skein error leaves the workflow with its record (name, message,
 * fields) so any process reading the run rebuilds the same class. Other errors (DBOS's own,
 * e.g. cancellation) pass through untouched.
 */
function recordingSkeinError(error: unknown): never {
  if (!(error instanceof SkeinError)) throw error;
  throw Object.assign(new Error(error.message, { cause: error }), { name: error.name, [ERROR_RECORD_KEY]: toErrorRecord(error) });
}

function unavailable(runId: string | undefined, afterMs: number, error: unknown, then: string): DurableEngineUnavailableError {
  return new DurableEngineUnavailableError(
    runId,
    `The DBOS system database has been unreachable for ${afterMs} ms (${(error as Error).message}). ` +
      `Nothing acknowledged is lost: DBOS keeps retrying, and runs in flight go on when it is back. ${then} Check systemDatabaseUrl and that PostgreSQL is up.`,
    { cause: error },
  );
}

function toEngineError(runId: string | undefined, error: unknown): unknown {
  const record = (error as Record<string, unknown> | null)?.[ERROR_RECORD_KEY];
  if (error instanceof Error && isErrorRecord(record)) return fromErrorRecord(record, { cause: error });
  if (error instanceof DurableRunError || error instanceof ConfigurationError) return error;
  if (error instanceof DbosErrors.DBOSAwaitedWorkflowCancelledError || error instanceof DbosErrors.DBOSWorkflowCancelledError) {
    return new DurableRunCancelledError(runId, `Run "${runId}" was cancelled (cancelRun or its timeout); its thread holds every turn it finished, whole.`, { cause: error });
  }
  if (isConnectionFailure(error)) {
    return new DurableEngineUnavailableError(
      runId,
      `The DBOS system database cannot be reached (${(error as Error).message}). Nothing was recorded by this call; runs already recorded resume when it is back. Check systemDatabaseUrl and that PostgreSQL is up.`,
      { cause: error },
    );
  }
  return error;
}

async function engineCall<T>(runId: string | undefined, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toEngineError(runId, error);
  }
}
