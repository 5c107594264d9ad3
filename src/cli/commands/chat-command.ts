import path from 'node:path';
import { loadAgent } from '../agent-loader.js';
import { UsageError } from '../cli-error.js';
import type { CliCommand } from '../cli-command.js';
import { printedHelp, writeLine, type CliIO } from '../cli-io.js';
import { CHAT_COMMANDS_HELP, ChatSession } from '../chat-session.js';
import { parseCommandArgs, requireOption } from '../parse-command-args.js';
import { DEFAULT_THREADS_DIR, ThreadRegistry } from '../thread-registry.js';
import { FileThreadSlot, isThreadFile, RegistryThreadSlot, type ThreadSlot } from '../thread-slot.js';

const HELP = `Usage: skein chat --config <file> --agent <name> [--thread <file|id>] [--threads-dir <dir>]

Chat with a configured agent on stdin/stdout. Replies stream as they are written; tool calls
and their results show one line each. The thread is saved after every turn and resumed on the
next start.

Options:
  --config <file>       the Skein config file (YAML or JSON)
  --agent <name>        the agent to chat with (a key under "agents" in the config)
  --thread <file|id>    a path ending in .json (or containing "/"): a file holding the serialized
                        thread, created if missing and rewritten after each turn;
                        otherwise an id in the thread registry, listed by "skein threads list".
                        Without it a new thread with a fresh id is started.
  --threads-dir <dir>   the thread registry (default: ${DEFAULT_THREADS_DIR} under the current directory)
  -h, --help            show this help

With a durable store (the agent's messageStore, e.g. "sqlite") the saved thread holds only the
store's key; the messages stay in the store.

${CHAT_COMMANDS_HELP}`;

export const chatCommand: CliCommand = {
  name: 'chat',
  summary: 'chat with an agent; the thread is saved after every turn and resumed',
  help: HELP,
  async run(args: string[], io: CliIO): Promise<number> {
    const { values } = parseCommandArgs('chat', {
      args,
      options: {
        config: { type: 'string' },
        agent: { type: 'string' },
        thread: { type: 'string' },
        'threads-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (printedHelp(values, io, HELP)) return 0;
    const configFile = requireOption('chat', 'config', values.config);
    const agentName = requireOption('chat', 'agent', values.agent);
    const registry = new ThreadRegistry(path.resolve(io.cwd, values['threads-dir'] ?? DEFAULT_THREADS_DIR));
    const threadArg = values.thread;
    if (threadArg !== undefined && !isThreadFile(threadArg) && !ThreadRegistry.isId(threadArg)) {
      throw new UsageError(`--thread "${threadArg}" is neither a .json file nor a thread id (1-64 letters, digits, "_" or "-")`, 'chat');
    }

    const { agent, config } = await loadAgent(configFile, agentName, io.cwd);
    const slot: ThreadSlot =
      threadArg !== undefined && isThreadFile(threadArg)
        ? new FileThreadSlot(path.resolve(io.cwd, threadArg))
        : new RegistryThreadSlot(registry, threadArg ?? ThreadRegistry.newId(), agentName, config);
    const saved = await slot.load();
    let thread;
    try {
      thread = saved === undefined ? agent.getNewThread() : await agent.deserializeThread(saved);
    } catch (error) {
      writeLine(io.stderr, `Cannot resume the thread in ${slot.describe()} with agent ${agentName}:`);
      throw error;
    }
    writeLine(io.stderr, `${saved === undefined ? 'New thread' : 'Resuming thread'} ${slot.describe()} with agent ${agentName}. /help lists commands.`);
    return new ChatSession({ agent, label: agent.name ?? agentName, thread, slot, io }).run();
  },
};
