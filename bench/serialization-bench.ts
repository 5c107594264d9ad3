/** Serialize + deserialize of a long in-memory thread vs JSON.stringify + JSON.parse of the same messages. */
import { AgentThread, type ChatAgent, type ChatMessage, InMemoryChatMessageStore } from 'skein';
import { median } from './stats.js';

export interface SerializationResult {
  messages: number;
  jsonBytes: number;
  /** Median milliseconds. */
  skeinMs: number;
  skeinSerializeMs: number;
  skeinDeserializeMs: number;
  jsonMs: number;
  /** Median over iterations of skein / JSON, paired. */
  ratio: number;
}

/** A conversation like a real one: text turns, with a tool call and its result every tenth turn. */
export function buildMessages(count: number): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const at = Date.UTC(2025, 0, 1);
  for (let i = 0; messages.length < count; i++) {
    const createdAt = new Date(at + i * 1000).toISOString();
    messages.push({ role: 'user', contents: [{ kind: 'text', text: `Message ${i}: what should I look at next, and why?` }], createdAt });
    if (i % 10 === 9 && messages.length + 3 <= count) {
      const callId = `call_${i}`;
      messages.push({ role: 'assistant', authorName: 'bench', messageId: `chatcmpl-${i}a`, createdAt, contents: [{ kind: 'function-call', callId, name: 'lookup_weather', arguments: `{"city":"Paris","day":${i}}` }] });
      messages.push({ role: 'tool', createdAt, contents: [{ kind: 'function-result', callId, result: { temperature: 21, sky: 'clear', day: i } }] });
    }
    if (messages.length < count) {
      messages.push({ role: 'assistant', authorName: 'bench', messageId: `chatcmpl-${i}`, createdAt, contents: [{ kind: 'text', text: `Reply ${i}: look at the next item on the list; it is the one that matters most today.` }] });
    }
  }
  return messages;
}

export async function runSerialization(agent: ChatAgent, count: number, iterations: number): Promise<SerializationResult> {
  const messages = buildMessages(count);
  const thread = new AgentThread({ origin: { provider: agent.chatClient.providerId, agent: agent.name }, messageStore: new InMemoryChatMessageStore(messages) });
  const skein: number[] = [];
  const ser: number[] = [];
  const de: number[] = [];
  const json: number[] = [];
  const ratios: number[] = [];
  let jsonBytes = 0;
  for (let i = 0; i < iterations + 2; i++) {
    const skeinFirst = i % 2 === 0;
    let s = 0;
    let j = 0;
    const runSkein = async () => {
      const t0 = performance.now();
      const text = JSON.stringify(await thread.serialize());
      const t1 = performance.now();
      const restored = await agent.deserializeThread(JSON.parse(text));
      const t2 = performance.now();
      const size = (restored.messageStore as InMemoryChatMessageStore).size;
      if (size !== count) throw new Error(`restored ${size} messages, expected ${count}`);
      s = t2 - t0;
      if (i >= 2) {
        ser.push(t1 - t0);
        de.push(t2 - t1);
      }
    };
    const runJson = () => {
      const t0 = performance.now();
      const text = JSON.stringify(messages);
      const back = JSON.parse(text) as unknown[];
      j = performance.now() - t0;
      jsonBytes = Buffer.byteLength(text);
      if (back.length !== count) throw new Error('JSON round trip lost messages');
    };
    if (skeinFirst) {
      await runSkein();
      runJson();
    } else {
      runJson();
      await runSkein();
    }
    if (i < 2) continue; // warm-up
    skein.push(s);
    json.push(j);
    ratios.push(s / j);
  }
  return {
    messages: count,
    jsonBytes,
    skeinMs: median(skein),
    skeinSerializeMs: median(ser),
    skeinDeserializeMs: median(de),
    jsonMs: median(json),
    ratio: median(ratios),
  };
}
