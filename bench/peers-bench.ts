/**
 * Optional peers: LangChain, the Vercel `ai` SDK and `@openai/agents`, each making the same
 * calls with the same growing history. They are never dependencies: `npm run bench:peers`
 * installs them into bench/.peers (outside the shared node_modules) and this module finds them
 * there or in the project; a missing peer is skipped with a note.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import OpenAI from 'openai';
import { type Contender, INSTRUCTIONS, MODEL } from './turns-bench.js';

const peersDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bench/.peers');

/** Imports `name` from the project, else from bench/.peers; undefined when neither has it. */
export async function importPeer(name: string): Promise<unknown> {
  try {
    return await import(name);
  } catch {
    // not in the project: look in bench/.peers
  }
  const dir = path.join(peersDir, 'node_modules', name);
  try {
    return await import(pathToFileURL(createRequire(path.join(peersDir, 'package.json')).resolve(name)).href);
  } catch {
    // ESM-only packages have no require entry: read their exports map
  }
  try {
    const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as {
      exports?: unknown;
      module?: string;
      main?: string;
    };
    const entry = pickEntry(pkg.exports) ?? pkg.module ?? pkg.main ?? 'index.js';
    return await import(pathToFileURL(path.join(dir, entry)).href);
  } catch {
    return undefined;
  }
}

function pickEntry(exports: unknown): string | undefined {
  if (typeof exports === 'string') return exports;
  if (!exports || typeof exports !== 'object') return undefined;
  const map = exports as Record<string, unknown>;
  const root = '.' in map ? map['.'] : map;
  if (typeof root === 'string') return root;
  if (!root || typeof root !== 'object') return undefined;
  const conditions = root as Record<string, unknown>;
  for (const key of ['import', 'node', 'default']) {
    const value = conditions[key];
    const picked = typeof value === 'string' ? value : pickEntry({ '.': value });
    if (picked) return picked;
  }
  return undefined;
}

interface LangChainMessage {
  content: unknown;
}
interface LangChainModule {
  ChatOpenAI: new (fields: Record<string, unknown>) => {
    invoke(messages: unknown[]): Promise<LangChainMessage>;
    stream(messages: unknown[]): Promise<AsyncIterable<LangChainMessage>>;
  };
}
interface AiModule {
  generateText(options: Record<string, unknown>): Promise<{ text: string }>;
  streamText(options: Record<string, unknown>): { textStream: AsyncIterable<string> };
}
interface AiOpenAIModule {
  createOpenAI(options: Record<string, unknown>): { chat(model: string): unknown };
}
interface AgentsModule {
  Agent: new (options: Record<string, unknown>) => unknown;
  run(agent: unknown, input: unknown[]): Promise<{ finalOutput?: unknown; history: unknown[] }>;
  run(
    agent: unknown,
    input: unknown[],
    options: { stream: true },
  ): Promise<{ toTextStream(): AsyncIterable<string>; completed: Promise<void>; history: unknown[] }>;
  setDefaultOpenAIClient(client: unknown): void;
  setOpenAIAPI(api: string): void;
  setTracingDisabled(disabled: boolean): void;
}

type Message = { role: string; content: string };

function textOf(content: unknown): string {
  return typeof content === 'string' ? content : JSON.stringify(content);
}

/** The installed version of a peer (for the results), or '?'. */
async function peerVersion(name: string): Promise<string> {
  try {
    const pkg = JSON.parse(await readFile(path.join(peersDir, 'node_modules', name, 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? '?';
  } catch {
    return '?';
  }
}

/**
 * The `openai` SDK that `@openai/agents` itself depends on (it may be a newer major than the
 * project's), so the agent runs on the client it was built for.
 */
async function agentsOpenAI(): Promise<new (options: Record<string, unknown>) => unknown> {
  try {
    const require = createRequire(path.join(peersDir, 'node_modules', '@openai', 'agents-openai', 'package.json'));
    const module = (await import(pathToFileURL(require.resolve('openai')).href)) as { default: new (options: Record<string, unknown>) => unknown };
    return module.default;
  } catch {
    return OpenAI as unknown as new (options: Record<string, unknown>) => unknown;
  }
}

/**
 * Peer contenders: non-streaming ones compared with the raw SDK (`openai SDK`), streaming ones
 * with the SDK's own stream (`openai SDK stream`). Each keeps the same growing history the way
 * its documentation shows, and sends one request per turn.
 */
export async function loadPeerContenders(baseURL: string): Promise<{ contenders: Contender[]; notes: string[]; versions: Record<string, string> }> {
  const contenders: Contender[] = [];
  const notes: string[] = [];
  const versions: Record<string, string> = {};
  const missing = (name: string) => notes.push(`${name} is not installed; skipped (npm run bench:peers installs it into bench/.peers)`);
  for (const name of ['@langchain/openai', '@langchain/core', 'ai', '@ai-sdk/openai', '@openai/agents']) versions[name] = await peerVersion(name);

  const langchain = (await importPeer('@langchain/openai')) as LangChainModule | undefined;
  if (langchain?.ChatOpenAI) {
    const chat = new langchain.ChatOpenAI({ model: MODEL, apiKey: 'bench', configuration: { baseURL } });
    contenders.push({
      name: 'LangChain',
      baseline: 'openai SDK',
      newConversation() {
        const history: unknown[] = [{ role: 'system', content: INSTRUCTIONS }];
        return {
          async turn(text) {
            history.push({ role: 'user', content: text });
            const reply = await chat.invoke(history);
            history.push(reply);
            return textOf(reply.content);
          },
        };
      },
    });
    contenders.push({
      name: 'LangChain stream',
      baseline: 'openai SDK stream',
      newConversation() {
        const history: unknown[] = [{ role: 'system', content: INSTRUCTIONS }];
        return {
          async turn(text) {
            history.push({ role: 'user', content: text });
            let reply = '';
            for await (const chunk of await chat.stream(history)) reply += textOf(chunk.content);
            history.push({ role: 'assistant', content: reply });
            return reply;
          },
        };
      },
    });
  } else missing('@langchain/openai');

  const ai = (await importPeer('ai')) as AiModule | undefined;
  const aiOpenAI = (await importPeer('@ai-sdk/openai')) as AiOpenAIModule | undefined;
  if (ai?.generateText && aiOpenAI?.createOpenAI) {
    const model = aiOpenAI.createOpenAI({ apiKey: 'bench', baseURL }).chat(MODEL);
    contenders.push({
      name: 'Vercel ai',
      baseline: 'openai SDK',
      newConversation() {
        const messages: Message[] = [];
        return {
          async turn(text) {
            messages.push({ role: 'user', content: text });
            const { text: reply } = await ai.generateText({ model, system: INSTRUCTIONS, messages });
            messages.push({ role: 'assistant', content: reply });
            return reply;
          },
        };
      },
    });
    contenders.push({
      name: 'Vercel ai stream',
      baseline: 'openai SDK stream',
      newConversation() {
        const messages: Message[] = [];
        return {
          async turn(text) {
            messages.push({ role: 'user', content: text });
            let reply = '';
            const result = ai.streamText({
              model,
              system: INSTRUCTIONS,
              messages,
              onError: ({ error }: { error: unknown }) => {
                throw error;
              },
            });
            for await (const part of result.textStream) reply += part;
            messages.push({ role: 'assistant', content: reply });
            return reply;
          },
        };
      },
    });
  } else missing('ai + @ai-sdk/openai');

  const agents = (await importPeer('@openai/agents')) as AgentsModule | undefined;
  if (agents?.Agent) {
    const Client = await agentsOpenAI();
    agents.setDefaultOpenAIClient(new Client({ apiKey: 'bench', baseURL }));
    agents.setOpenAIAPI('chat_completions');
    agents.setTracingDisabled(true);
    const agent = new agents.Agent({ name: 'bench', instructions: INSTRUCTIONS, model: MODEL });
    contenders.push({
      name: '@openai/agents',
      baseline: 'openai SDK',
      newConversation() {
        let history: unknown[] = [];
        return {
          async turn(text) {
            const result = await agents.run(agent, [...history, { role: 'user', content: text }]);
            history = result.history;
            return String(result.finalOutput ?? '');
          },
        };
      },
    });
    contenders.push({
      name: '@openai/agents stream',
      baseline: 'openai SDK stream',
      newConversation() {
        let history: unknown[] = [];
        return {
          async turn(text) {
            const result = await agents.run(agent, [...history, { role: 'user', content: text }], { stream: true });
            let reply = '';
            for await (const part of result.toTextStream()) reply += part;
            await result.completed;
            history = result.history;
            return reply;
          },
        };
      },
    });
  } else missing('@openai/agents');

  return { contenders, notes, versions };
}
