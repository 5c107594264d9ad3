import { type ChatMessage, messageText } from '../messages/chat-message.js';
import type { JsonObject } from '../serialization/json.js';
import type { AIContext, ContextInvokedArgs, ContextInvokingArgs, ContextProvider } from './context-provider.js';

const PATTERNS: [key: string, pattern: RegExp][] = [
  ['name', /\bmy name is ([\p{L}][\p{L}'-]*)/iu],
  ['location', /\bI live in ([\p{L}][\p{L} '-]*?)(?:[.,!?]|$)/iu],
  ['likes', /\bI (?:like|love) ([^.,!?]+)/iu],
  ['occupation', /\bI(?: am|'m) an? ([\p{L} -]+?)(?:[.,!?]|$)/iu],
];

/**
 * Remembers facts users state about themselves ("my name is …", "I live in …", "I like …") in
 * the thread's state, and tells the model about them on every later run. Because the facts live
 * in the thread, they survive serialize/resume and a history trimmed by a reducer.
 */
export class UserFactsMemory implements ContextProvider {
  readonly id = 'user-facts';

  invoking({ state }: ContextInvokingArgs): AIContext | undefined {
    const facts = factsOf(state);
    const entries = Object.entries(facts);
    if (entries.length === 0) return undefined;
    return { instructions: `Known facts about the user: ${entries.map(([k, v]) => `${k}: ${v}`).join('; ')}.` };
  }

  invoked({ input, state, error }: ContextInvokedArgs): JsonObject | undefined {
    if (error) return undefined;
    const facts = { ...factsOf(state) };
    let changed = false;
    for (const message of input) {
      if (message.role !== 'user') continue;
      for (const [key, value] of extractFacts(message)) {
        if (facts[key] !== value) {
          facts[key] = value;
          changed = true;
        }
      }
    }
    return changed ? { facts } : undefined;
  }
}

function factsOf(state: JsonObject | undefined): Record<string, string> {
  const facts = state?.facts;
  if (!facts || typeof facts !== 'object' || Array.isArray(facts)) return {};
  return Object.fromEntries(Object.entries(facts).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

function extractFacts(message: ChatMessage): [string, string][] {
  const text = messageText(message);
  const found: [string, string][] = [];
  for (const [key, pattern] of PATTERNS) {
    const match = pattern.exec(text);
    if (match?.[1]) found.push([key, match[1].trim()]);
  }
  return found;
}
