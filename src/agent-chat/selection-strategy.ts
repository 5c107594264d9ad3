import type { AIAgent } from '../agents/ai-agent.js';
import { type ChatMessage, textMessage } from '../messages/chat-message.js';
import { shareableMessages, viewFor } from './chat-message-view.js';

export interface SelectionContext {
  readonly agents: readonly AIAgent[];
  /** The whole chat so far. */
  readonly history: readonly ChatMessage[];
  /** 1-based turn number within this invocation. */
  readonly turn: number;
  readonly signal?: AbortSignal;
}

/** Picks the agent that speaks next. */
export const SelectionStrategy = Symbol('SelectionStrategy');
export interface SelectionStrategy {
  next(context: SelectionContext): AIAgent | Promise<AIAgent>;
}

/**
 * Agents take turns in order: the one after the last agent that spoke (found in the history,
 * so a resumed chat continues the rotation), the first when none has spoken yet.
 */
export class SequentialSelectionStrategy implements SelectionStrategy {
  next({ agents, history }: SelectionContext): AIAgent {
    for (let i = history.length - 1; i >= 0; i--) {
      const author = history[i]!.role === 'assistant' ? history[i]!.authorName : undefined;
      if (author === undefined) continue;
      const index = agents.findIndex((a) => a.name === author);
      if (index >= 0) return agents[(index + 1) % agents.length]!;
    }
    return agents[0]!;
  }
}

export interface ModelSelectionOptions {
  /** The agent asked who speaks next (e.g. a small, cheap ChatAgent). It runs on a throwaway thread. */
  selector: AIAgent;
  /** The question put after the transcript; by default it lists the participants and asks for one name. */
  prompt?: (agents: readonly AIAgent[], history: readonly ChatMessage[]) => string;
  /** How many recent messages of the chat the selector sees. Default 20. */
  historyLimit?: number;
  /** Used when the reply names no participant. Default: sequential. */
  fallback?: SelectionStrategy;
  /** Called when the reply named nobody and the fallback chose (for logging). */
  onFallback?: (reply: string, chosen: AIAgent) => void;
}

/**
 * Asks a model which agent speaks next: the selector sees the recent transcript and a prompt
 * listing the participants, and the first participant named in its reply speaks.
 */
export class ModelSelectionStrategy implements SelectionStrategy {
  readonly #options: ModelSelectionOptions;

  constructor(options: ModelSelectionOptions) {
    if (!options?.selector) throw new TypeError('ModelSelectionStrategy needs a selector agent.');
    this.#options = options;
  }

  async next(context: SelectionContext): Promise<AIAgent> {
    const { selector, historyLimit = 20 } = this.#options;
    const prompt = (this.#options.prompt ?? defaultPrompt)(context.agents, context.history);
    const transcript = viewFor(selector.name, shareableMessages(context.history)).slice(-historyLimit);
    const response = await selector.run([...transcript, textMessage('user', prompt)], { signal: context.signal });
    const reply = response.text;
    const named = firstNamed(reply, context.agents);
    if (named) return named;
    const chosen = await (this.#options.fallback ?? new SequentialSelectionStrategy()).next(context);
    this.#options.onFallback?.(reply, chosen);
    return chosen;
  }
}

function defaultPrompt(agents: readonly AIAgent[]): string {
  const list = agents.map((a) => `- ${a.name}${a.description ? `: ${a.description}` : ''}`).join('\n');
  return `Which participant should speak next? Participants:\n${list}\nReply with the participant's name only.`;
}

/** The participant whose name (as a whole word, any case) comes first in `text`. */
export function firstNamed(text: string, agents: readonly AIAgent[]): AIAgent | undefined {
  let best: { agent: AIAgent; at: number } | undefined;
  for (const agent of agents) {
    if (!agent.name) continue;
    const escaped = agent.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const at = new RegExp(`(?:^|[^\\p{L}\\p{N}_-])${escaped}(?:$|[^\\p{L}\\p{N}_-])`, 'iu').exec(text)?.index;
    if (at !== undefined && (!best || at < best.at)) best = { agent, at };
  }
  return best?.agent;
}
