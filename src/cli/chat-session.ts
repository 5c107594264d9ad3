import { createInterface } from 'node:readline';
import type { AIAgent } from '../agents/ai-agent.js';
import { approvalRequestsFor, waitingApprovalsOf } from '../agents/function-approvals.js';
import { ConfigurationError } from '../errors/skein-error.js';
import { approvalResponse, type AgentInput } from '../messages/chat-message.js';
import type { FunctionApprovalRequestContent } from '../messages/content.js';
import type { AgentThread } from '../threads/agent-thread.js';
import { ExitCode } from './cli-error.js';
import { writeLine, type CliIO } from './cli-io.js';
import { LineReader } from './line-reader.js';
import { Progress } from './progress.js';
import { ReplyPrinter } from './reply-printer.js';
import type { ThreadSlot } from './thread-slot.js';

export const CHAT_COMMANDS_HELP = `Commands inside a chat:
  /thread            print this chat's thread id or file
  /approve           approve the tool calls waiting for approval
  /reject [reason]   reject them
  /help              this list
  /exit              leave (Ctrl-D does too)
Ctrl-C while a reply streams stops it and keeps the thread as it was; Ctrl-C at the prompt exits.`;

export interface ChatSessionOptions {
  agent: AIAgent;
  /** How replies are labelled, e.g. the agent's name. */
  label: string;
  thread: AgentThread;
  slot: ThreadSlot;
  io: CliIO;
}

type TurnOutcome = 'completed' | 'interrupted' | 'failed';

/** The read-run-print loop of `skein chat`: one streamed run per line, the thread saved after each. */
export class ChatSession {
  #cancelTurn: (() => void) | undefined;
  readonly #callNames = new Map<string, string>();
  /** How many calls waited for approval in the thread as last loaded or saved. */
  #savedPending = 0;

  constructor(private readonly options: ChatSessionOptions) {}

  /** The calls waiting for approval: the thread holds them, so they survive a restart. */
  get #pendingApprovals(): FunctionApprovalRequestContent[] {
    return approvalRequestsFor(waitingApprovalsOf(this.options.thread));
  }

  async run(): Promise<number> {
    const { io } = this.options;
    this.#savedPending = this.#pendingApprovals.length;
    this.#showPendingApprovals();
    const interactive = io.stdin.isTTY === true;
    const rl = createInterface({ input: io.stdin, output: interactive ? io.stdout : undefined, terminal: interactive, prompt: 'you> ' });
    const lines = new LineReader(rl);
    let interrupted = false;
    // At the prompt Ctrl-C leaves; during a reply it only stops that reply.
    const onInterrupt = () => {
      if (this.#cancelTurn) return this.#cancelTurn();
      interrupted = true;
      lines.close();
    };
    rl.on('SIGINT', onInterrupt); // a terminal in raw mode: readline sees the keypress
    process.on('SIGINT', onInterrupt); // pipes, kill -INT
    try {
      for (;;) {
        if (interactive) rl.prompt();
        const line = await lines.next();
        if (line === undefined) break;
        const text = line.trim();
        if (!text) continue;
        if (text.startsWith('/')) {
          const action = await this.#slashCommand(text);
          if (action === 'exit') break;
          continue;
        }
        await this.#turn(text);
      }
    } finally {
      process.off('SIGINT', onInterrupt);
      rl.close();
    }
    // An interrupted run settles approved calls as it winds down, after the turn returned.
    if (this.#pendingApprovals.length !== this.#savedPending) await this.#save();
    if (interrupted && interactive) writeLine(io.stdout);
    return interrupted ? ExitCode.interrupted : ExitCode.ok;
  }

  async #slashCommand(text: string): Promise<'exit' | undefined> {
    const { io, slot } = this.options;
    const [command, ...rest] = text.split(/\s+/);
    switch (command) {
      case '/exit':
      case '/quit':
        return 'exit';
      case '/thread':
        writeLine(io.stdout, `thread: ${slot.describe()}`);
        return undefined;
      case '/help':
        writeLine(io.stdout, CHAT_COMMANDS_HELP);
        return undefined;
      case '/approve':
      case '/reject': {
        if (!this.#pendingApprovals.length) {
          writeLine(io.stderr, 'No tool call is waiting for approval.');
          return undefined;
        }
        const approved = command === '/approve';
        const reason = rest.join(' ') || undefined;
        await this.#turn(this.#pendingApprovals.map((request) => approvalResponse(request, approved, reason)));
        return undefined;
      }
      default:
        writeLine(io.stderr, `Unknown command ${command}; /help lists the commands.`);
        return undefined;
    }
  }

  /** A resumed thread that stopped at tools needing approval: say so, as the turn that stopped did. */
  #showPendingApprovals(): void {
    const pending = this.#pendingApprovals;
    if (!pending.length) return;
    const printer = new ReplyPrinter(this.options.io.stdout, this.options.label, this.#callNames);
    writeLine(this.options.io.stderr, `This thread is waiting for your approval of ${pending.length === 1 ? 'a tool call' : `${pending.length} tool calls`}:`);
    for (const request of pending) printer.approvalNeeded(request);
  }

  /**
   * One streamed run, the thread saved after it. A failed or interrupted run leaves the thread as
   * it was, except for approved tools that already ran: their results are kept (so answering
   * again never runs a tool twice), and that is saved too.
   */
  async #turn(input: AgentInput): Promise<TurnOutcome> {
    const { agent, thread, io, label } = this.options;
    const pendingBefore = this.#pendingApprovals.length;
    const progress = new Progress(io.stderr);
    const printer = new ReplyPrinter(io.stdout, label, this.#callNames);
    progress.start('thinking…');
    let outcome: TurnOutcome;
    let fatal: ConfigurationError | undefined;
    try {
      outcome = await new Promise<TurnOutcome>((resolve, reject) => {
        const subscription = agent.runStream(input, { thread }).subscribe({
          next: (update) => {
            progress.stop();
            printer.print(update);
          },
          error: reject,
          complete: () => resolve('completed'),
        });
        // Unsubscribing aborts the request; the agent commits nothing of an aborted run.
        this.#cancelTurn = () => {
          subscription.unsubscribe();
          resolve('interrupted');
        };
      });
    } catch (error) {
      outcome = 'failed';
      progress.stop();
      printer.end();
      // Trying again cannot help a configuration problem: end the chat with it (exit 1).
      if (error instanceof ConfigurationError) fatal = error;
      else {
        const settled = pendingBefore > 0 && this.#pendingApprovals.length === 0;
        writeLine(io.stderr, `${describeError(error)}\n${settled ? 'The approved tool calls ran and their results are kept; send a message to go on.' : 'The thread is unchanged; you can try again.'}`);
      }
    } finally {
      this.#cancelTurn = undefined;
      progress.stop();
      printer.end();
    }
    if (outcome === 'interrupted') writeLine(io.stderr, '(interrupted: the reply was discarded and the thread is unchanged)');
    if (outcome === 'completed' || this.#pendingApprovals.length !== this.#savedPending) await this.#save();
    if (fatal) throw fatal;
    return outcome;
  }

  async #save(): Promise<void> {
    const { thread, slot, io } = this.options;
    try {
      await slot.save(await thread.serialize());
      this.#savedPending = this.#pendingApprovals.length;
    } catch (error) {
      writeLine(io.stderr, `The thread could not be saved to ${slot.describe()}: ${describeError(error)}`);
    }
  }
}

/** The typed error's name and message, e.g. `RateLimitError: ...`. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
