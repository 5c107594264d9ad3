import path from 'node:path';
import { createInterface } from 'node:readline';
import type { AIAgent } from '../../agents/ai-agent.js';
import { waitingApprovalsOf } from '../../agents/function-approvals.js';
import { ConfigurationError, HistoryPositionError, HistoryUnavailableError, SkeinError } from '../../errors/skein-error.js';
import type { ChatMessage } from '../../messages/chat-message.js';
import { SerializationRegistryImpl } from '../../serialization/serialization-registry.js';
import { SERVICE_THREAD_TYPE, UNSTARTED_THREAD_TYPE, type AgentThread, type SerializedThread } from '../../threads/agent-thread.js';
import { loadAgent } from '../agent-loader.js';
import { ExitCode, UsageError } from '../cli-error.js';
import type { CliCommand } from '../cli-command.js';
import { printedHelp, writeLine, type CliIO } from '../cli-io.js';
import { formatMessage, toolNamesByCallId } from '../message-format.js';
import { parseCommandArgs } from '../parse-command-args.js';
import { DEFAULT_THREADS_DIR, ThreadRegistry, type ThreadRecord } from '../thread-registry.js';

const HELP = `Usage: skein threads list [--threads-dir <dir>] [--json]
       skein threads show <id> [--config <file> --agent <name>] [--threads-dir <dir>]
       skein threads delete <id> [--yes] [--config <file> --agent <name>] [--threads-dir <dir>]
       skein threads fork <id> [--at <n>] [--as <new id>] [--config <file> --agent <name>] [--threads-dir <dir>]

The thread registry: threads "skein chat" keeps by id (${DEFAULT_THREADS_DIR}/<id>.json).

  list     every thread, newest first: id, agent, provider, messages (or the service
           thread id), last update
  show     one thread: every message with its role, author and contents, whoever keeps it
           (a service thread's messages are read from the service through its agent)
  fork     a new thread holding the history up to and including message <n> (numbered
           from 1 as "show" prints them: #<n>; default: all of it), saved under a new id (or
           --as); the original is unchanged. A fork never ends in an unfinished turn (one
           waiting for approval): it ends before it. Not every thread kind can fork
           (docs/history.md).
  delete   remove a thread. A service thread is also deleted on the service, and a durable
           store's messages in the store (agent.deleteThread); that needs the config and agent,
           taken from --config/--agent or from what the thread recorded. Asks first unless --yes.

Options:
  --config <file>       config file to load the agent from (default: the one the chat used)
  --agent <name>        agent to use (default: the one the chat used)
  --threads-dir <dir>   the thread registry (default: ${DEFAULT_THREADS_DIR} under the current directory)
  --json                list: print the records as JSON
  --at <n>              fork: the last message the fork holds (its number #<n> in "show", from 1)
  --as <id>             fork: the new thread's id (default: a fresh one)
  -y, --yes             delete: do not ask for confirmation
  -h, --help            show this help`;

/** Store types the core reads without a config (their messages are in the serialized thread). */
const SELF_CONTAINED_TYPES = new Set(['in-memory', UNSTARTED_THREAD_TYPE, SERVICE_THREAD_TYPE]);

export const threadsCommand: CliCommand = {
  name: 'threads',
  summary: 'list, show, fork or delete the threads "skein chat" saved',
  help: HELP,
  async run(args: string[], io: CliIO): Promise<number> {
    const { values, positionals } = parseCommandArgs('threads', {
      args,
      allowPositionals: true,
      options: {
        config: { type: 'string' },
        agent: { type: 'string' },
        'threads-dir': { type: 'string' },
        json: { type: 'boolean' },
        yes: { type: 'boolean', short: 'y' },
        at: { type: 'string' },
        as: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (printedHelp(values, io, HELP)) return ExitCode.ok;
    const registry = new ThreadRegistry(path.resolve(io.cwd, values['threads-dir'] ?? DEFAULT_THREADS_DIR));
    const [action, id, ...extra] = positionals;
    if (extra.length) throw new UsageError(`unexpected argument ${extra[0]}`, 'threads');
    const agentOptions = { config: values.config, agent: values.agent };
    switch (action) {
      case 'list':
        if (id !== undefined) throw new UsageError(`"threads list" takes no argument, got ${id}`, 'threads');
        return list(registry, io, values.json === true);
      case 'show':
        return show(registry, requireId(action, id), agentOptions, io);
      case 'delete':
        return remove(registry, requireId(action, id), agentOptions, values.yes === true, io);
      case 'fork':
        return fork(registry, requireId(action, id), agentOptions, { at: parseAt(values.at), as: values.as === undefined ? undefined : requireId('fork --as', values.as) }, io);
      case undefined:
        throw new UsageError('missing subcommand: list, show <id>, fork <id> or delete <id>', 'threads');
      default:
        throw new UsageError(`unknown subcommand "${action}": use list, show <id>, fork <id> or delete <id>`, 'threads');
    }
  },
};

interface AgentOptions {
  config?: string;
  agent?: string;
}

function requireId(action: string, id: string | undefined): string {
  if (id === undefined) throw new UsageError(`"threads ${action}" needs a thread id`, 'threads');
  if (!ThreadRegistry.isId(id)) throw new UsageError(`"${id}" is not a thread id (1-64 letters, digits, "_" or "-")`, 'threads');
  return id;
}

async function list(registry: ThreadRegistry, io: CliIO, json: boolean): Promise<number> {
  const { records, problems } = await registry.list();
  for (const problem of problems) writeLine(io.stderr, `skipped: ${problem}`);
  if (json) {
    writeLine(io.stdout, JSON.stringify(records, undefined, 2));
    return ExitCode.ok;
  }
  if (!records.length) {
    writeLine(io.stderr, `No threads in ${registry.dir}. Start one with "skein chat --config <file> --agent <name>".`);
    return ExitCode.ok;
  }
  const rows = [['ID', 'AGENT', 'PROVIDER', 'MESSAGES', 'UPDATED'], ...records.map((r) => [r.id, r.agent, r.provider, historySummary(r.thread), r.updatedAt])];
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  for (const row of rows) writeLine(io.stdout, row.map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col]!))).join('  '));
  return ExitCode.ok;
}

/** The message count, the service thread id, or the store type (a durable store's count needs the store). */
function historySummary(thread: SerializedThread): string {
  if (thread.serviceThreadId !== undefined) return `service ${thread.serviceThreadId}`;
  if (thread.$type === UNSTARTED_THREAD_TYPE) return '0';
  const messages = thread.store?.messages;
  if (Array.isArray(messages)) return String(messages.length);
  return `${thread.$type} store`;
}

async function show(registry: ThreadRegistry, id: string, options: AgentOptions, io: CliIO): Promise<number> {
  const record = await readRecord(registry, id);
  // A service thread's messages are on the service: read through its agent when the config is known.
  const serviceWithAgent = record.thread.serviceThreadId !== undefined && (options.config ?? record.config) !== undefined;
  const { thread, agent } = await openThread(record, options, io, serviceWithAgent);
  writeLine(io.stdout, `thread ${record.id}`);
  writeLine(io.stdout, `agent: ${record.agent}  provider: ${record.provider}`);
  if (record.config) writeLine(io.stdout, `config: ${record.config}`);
  writeLine(io.stdout, `created: ${record.createdAt}  updated: ${record.updatedAt}`);
  const messages = await historyToShow(thread, agent, io);
  if (messages) {
    writeLine(io.stdout, `messages: ${messages.length}${thread.messageStore ? ` (${thread.messageStore.type} store)` : ''}`);
    const names = toolNamesByCallId(messages);
    messages.forEach((message, i) => writeLine(io.stdout, formatMessage(message, i, names)));
  }
  showPendingApprovals(thread, io);
  return ExitCode.ok;
}

/** Calls the thread stopped at, waiting for `/approve` or `/reject` in `skein chat`. */
/** The messages `show` prints: read through the agent when there is one; undefined when a service thread's history cannot be shown. */
async function historyToShow(thread: AgentThread, agent: AIAgent | undefined, io: CliIO): Promise<ChatMessage[] | undefined> {
  if (thread.serviceThreadId !== undefined) {
    writeLine(io.stdout, `service thread: ${thread.serviceThreadId} (the history is kept by the service, not here)`);
    if (!agent) return undefined;
    try {
      return await agent.getMessages(thread);
    } catch (error) {
      if (!(error instanceof HistoryUnavailableError)) throw error;
      writeLine(io.stdout, `messages: not available (${error.message})`);
      return undefined;
    }
  }
  if (agent) return agent.getMessages(thread);
  return thread.messageStore ? thread.messageStore.listMessages() : [];
}

function showPendingApprovals(thread: AgentThread, io: CliIO): void {
  for (const call of waitingApprovalsOf(thread)) writeLine(io.stdout, `waiting for approval: ${call.name} ${call.arguments || '{}'} (answer in "skein chat" with /approve or /reject)`);
}

async function remove(registry: ThreadRegistry, id: string, options: AgentOptions, yes: boolean, io: CliIO): Promise<number> {
  const record = await readRecord(registry, id);
  const remote = record.thread.serviceThreadId !== undefined || !SELF_CONTAINED_TYPES.has(record.thread.$type);
  const what = record.thread.serviceThreadId !== undefined
    ? `thread ${id} and service thread ${record.thread.serviceThreadId} on ${record.provider}`
    : `thread ${id} (${historySummary(record.thread)}${/^\d+$/.test(historySummary(record.thread)) ? ' messages' : ''})`;
  if (!yes && !(await confirm(`Delete ${what}? [y/N] `, io))) {
    writeLine(io.stderr, 'Not deleted.');
    return ExitCode.failure;
  }
  if (remote) {
    // Service threads are never deleted implicitly: only here, on an explicit delete.
    const { thread, agent } = await openThread(record, options, io, true);
    await agent!.deleteThread(thread);
  }
  await registry.delete(id);
  writeLine(io.stdout, `Deleted ${what}.`);
  return ExitCode.ok;
}

function parseAt(at: string | undefined): number | undefined {
  if (at === undefined) return undefined;
  if (!/^\d+$/.test(at)) throw new UsageError(`--at takes a message number (1, 2, ... as "threads show" numbers them: #1, #2, ...), got "${at}"`, 'threads');
  return Number(at);
}

/**
 * The history index of message number `at` (1-based, as `show` prints `#<n>`), checked against
 * the thread's history; a thread whose history cannot be read is left to forkThread to refuse.
 */
async function forkIndex(agent: AIAgent, thread: AgentThread, id: string, at: number): Promise<number> {
  let count: number;
  try {
    count = (await agent.getMessages(thread)).length;
  } catch (error) {
    if (error instanceof HistoryUnavailableError) return at - 1;
    throw error;
  }
  if (at >= 1 && at <= count) return at - 1;
  const valid = count === 0 ? 'none: the thread has no messages yet, so fork it without --at' : `from 1 to ${count}`;
  throw new HistoryPositionError(
    `Expected --at to be a message number as "skein threads show ${id}" numbers them (#1 is the oldest), found ${at}; valid numbers: ${valid}.`,
    at,
  );
}

/** Forks through the agent (every kind forks its own way) and saves the fork as a new record. */
async function fork(registry: ThreadRegistry, id: string, options: AgentOptions, fork: { at?: number; as?: string }, io: CliIO): Promise<number> {
  const record = await readRecord(registry, id);
  const newId = fork.as ?? ThreadRegistry.newId();
  if (await registry.read(newId)) throw new UsageError(`a thread "${newId}" already exists; choose another --as`, 'threads');
  const { thread, agent } = await openThread(record, options, io, true);
  const forked = await agent!.forkThread(thread, fork.at === undefined ? {} : { at: await forkIndex(agent!, thread, id, fork.at) });
  const now = new Date().toISOString();
  await registry.write({ ...record, id: newId, createdAt: now, updatedAt: now, thread: await forked.serialize() });
  const count = (await agent!.getMessages(forked).catch(() => undefined))?.length;
  writeLine(io.stdout, `Forked thread ${id}${fork.at === undefined ? '' : ` at message ${fork.at}`} into ${newId}${count === undefined ? '' : ` (${count} messages)`}.`);
  writeLine(io.stdout, `Continue it with: skein chat --agent ${record.agent}${record.config ? ` --config ${record.config}` : ''} --thread ${newId}`);
  return ExitCode.ok;
}

async function readRecord(registry: ThreadRegistry, id: string): Promise<ThreadRecord> {
  const record = await registry.read(id);
  if (!record) throw new SkeinError(`No thread "${id}" in ${registry.dir}; "skein threads list" shows the threads there.`);
  return record;
}

/**
 * Reads the record's thread: through the agent when it must (a durable store, a service delete,
 * or --config given), else with the core serializers alone, so `show` works without the config.
 */
async function openThread(record: ThreadRecord, options: AgentOptions, io: CliIO, needAgent: boolean): Promise<{ thread: AgentThread; agent?: AIAgent }> {
  const viaAgent = needAgent || options.config !== undefined || !SELF_CONTAINED_TYPES.has(record.thread.$type);
  if (!viaAgent) return { thread: await SerializationRegistryImpl.withDefaults().readThread(record.thread) };
  const config = options.config ?? record.config;
  const agentName = options.agent ?? record.agent;
  if (config === undefined) {
    throw new UsageError(`thread ${record.id} needs its agent (a "${record.thread.$type}" thread): give --config <file> --agent <name>`, 'threads');
  }
  let loaded;
  try {
    loaded = await loadAgent(config, agentName, io.cwd);
  } catch (error) {
    if (error instanceof ConfigurationError && options.config === undefined) {
      writeLine(io.stderr, `Thread ${record.id} was made with ${config}; give --config/--agent if that file moved.`);
    }
    throw error;
  }
  return { thread: await loaded.agent.deserializeThread(record.thread), agent: loaded.agent };
}

async function confirm(question: string, io: CliIO): Promise<boolean> {
  io.stderr.write(question);
  const rl = createInterface({ input: io.stdin, terminal: false });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.once('line', resolve);
      rl.once('close', () => resolve(''));
    });
    if (io.stdin.isTTY !== true) writeLine(io.stderr);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
