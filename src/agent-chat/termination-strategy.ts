import type { AIAgent } from '../agents/ai-agent.js';
import { type ChatMessage, textMessage } from '../messages/chat-message.js';
import { shareableMessages, viewFor } from './chat-message-view.js';

export interface TerminationContext {
  /** The agent that just spoke. */
  readonly agent: AIAgent;
  /** What it produced this turn. */
  readonly produced: readonly ChatMessage[];
  /** The whole chat, this turn included. */
  readonly history: readonly ChatMessage[];
  /** 1-based turn number within this invocation. */
  readonly turn: number;
  readonly signal?: AbortSignal;
}

/** Decides, after each turn, whether the invocation stops. */
export const TerminationStrategy = Symbol('TerminationStrategy');
export interface TerminationStrategy {
  shouldTerminate(context: TerminationContext): boolean | Promise<boolean>;
}

/** Stops after `maxTurns` turns of one invocation. */
export class MaxTurnsTermination implements TerminationStrategy {
  constructor(readonly maxTurns: number) {
    if (!Number.isInteger(maxTurns) || maxTurns < 1) throw new RangeError(`maxTurns must be a positive integer, got ${maxTurns}.`);
  }

  shouldTerminate({ turn }: TerminationContext): boolean {
    return turn >= this.maxTurns;
  }
}

/** Stops when the predicate says so (e.g. the reviewer's reply contains "approved"). */
export class PredicateTermination implements TerminationStrategy {
  constructor(readonly predicate: (context: TerminationContext) => boolean | Promise<boolean>) {}

  shouldTerminate(context: TerminationContext): boolean | Promise<boolean> {
    return this.predicate(context);
  }
}

export interface AgentApprovalOptions {
  /** The agent asked whether the chat is done; it runs on a throwaway thread. */
  judge: AIAgent;
  /** Only the turns of these agents are judged (e.g. the reviewer's). Default: every turn. */
  judgedAgents?: readonly AIAgent[];
  /** Put after the transcript; `false` sends the transcript alone (the judge's instructions say what to do). Default asks for "yes" or "no". */
  prompt?: string | false;
  /** Reads the judge's reply. Default: it starts with "yes" or "approve". */
  approves?: (reply: string) => boolean;
  /** How many recent messages the judge sees. Default 20. */
  historyLimit?: number;
}

export const DEFAULT_APPROVAL_PROMPT = 'Has the participants\' work been approved and is the task complete? Answer "yes" or "no".';

/** Asks an agent whether the chat is done: the approval comes from a model, not from code. */
export class AgentApprovalTermination implements TerminationStrategy {
  readonly #options: AgentApprovalOptions;

  constructor(options: AgentApprovalOptions) {
    if (!options?.judge) throw new TypeError('AgentApprovalTermination needs a judge agent.');
    this.#options = options;
  }

  async shouldTerminate(context: TerminationContext): Promise<boolean> {
    const { judge, judgedAgents, historyLimit = 20 } = this.#options;
    if (judgedAgents && !judgedAgents.includes(context.agent)) return false;
    const transcript = viewFor(judge.name, shareableMessages(context.history)).slice(-historyLimit);
    const prompt = this.#options.prompt ?? DEFAULT_APPROVAL_PROMPT;
    const input = prompt === false ? transcript : [...transcript, textMessage('user', prompt)];
    const response = await judge.run(input, { signal: context.signal });
    return (this.#options.approves ?? defaultApproves)(response.text);
  }
}

function defaultApproves(reply: string): boolean {
  return /^\W*(yes|approved?)\b/i.test(reply);
}

/** Stops when any of the strategies says so (all are asked, in order, until one does). */
export function anyTermination(...strategies: TerminationStrategy[]): TerminationStrategy {
  return {
    async shouldTerminate(context) {
      for (const s of strategies) if (await s.shouldTerminate(context)) return true;
      return false;
    },
  };
}
