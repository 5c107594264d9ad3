import { createHash } from 'node:crypto';
import type OpenAI from 'openai';

/**
 * Which OpenAI service (and account) a client talks to, for channel keys: the base URL and a
 * short hash of the API key. Threads made with one key are invisible to another, so the key's
 * identity matters, but the key itself never goes into state that is stored.
 */
export function openAIServiceIdentity(client: OpenAI): string {
  const keyHash = createHash('sha256').update(String(client.apiKey ?? '')).digest('hex').slice(0, 12);
  return `${client.baseURL.replace(/\/+$/, '')}#${keyHash}`;
}
