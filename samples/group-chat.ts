/**
 * A group chat: a writer (Chat Completions, history kept by Skein) and a reviewer (an
 * Assistants v2 assistant, history kept in an assistant thread) take turns on one draft until
 * the reviewer approves or six turns have passed. The chat is saved to JSON mid-way and resumed
 * as another process would, then its service thread is deleted.
 * Uses the real OpenAI API when OPENAI_API_KEY is set, the bundled emulator otherwise.
 *   npx tsc -p tsconfig.json && node dist/samples/group-chat.js
 */
import {
  AgentGroupChat,
  agentToken,
  anyTermination,
  createContainer,
  MaxTurnsTermination,
  messageText,
  PredicateTermination,
} from 'skein';
import { openaiPlugin } from 'skein/openai';
import { Emulator } from 'skein/testing';

const apiKey = process.env.OPENAI_API_KEY;
const emulator = apiKey ? undefined : await Emulator.start();
const baseURL = emulator?.openaiBaseURL ?? process.env.OPENAI_BASE_URL;
const model = process.env.OPENAI_MODEL ?? 'gpt-4.1';
console.log(emulator ? `No OPENAI_API_KEY: using the local emulator at ${baseURL}\n` : 'Using the OpenAI API\n');

function build() {
  return createContainer({
    plugins: [openaiPlugin({ apiKey: apiKey ?? 'emulator', baseURL })],
    agents: {
      writer: { client: 'openai-chat', model, instructions: 'You write short slogans. Improve the draft using the reviewer\'s feedback.' },
      reviewer: {
        client: 'openai-assistants',
        model,
        instructions: 'You review slogans. Reply "APPROVED" when the slogan is good, otherwise give one concrete suggestion.',
      },
    },
  });
}

const approved = new PredicateTermination(({ agent, produced }) => agent.name === 'reviewer' && produced.some((m) => messageText(m).includes('APPROVED')));
const termination = anyTermination(approved, new MaxTurnsTermination(6));

const chat = AgentGroupChat.fromContainer(build(), { agents: ['writer', 'reviewer'], termination });
await chat.addChatMessage('Write a slogan for a bicycle shop that also repairs e-bikes.');
for (const m of await chat.invoke({ agent: chat.agents[0] })) console.log(`${m.authorName}: ${messageText(m)}\n`);

// Save mid-chat and resume in a fresh container, as another process would.
const saved = JSON.stringify(await chat.serialize());
console.log(`(saved the chat: ${saved.length} bytes of JSON; resuming it in a new container)\n`);
const container = build();
const resumed = await AgentGroupChat.deserialize(JSON.parse(saved), { container, termination });

// Stream the rest, turn by turn.
let author: string | undefined;
await new Promise<void>((resolve, reject) =>
  resumed.invokeStream().subscribe({
    next: (update) => {
      if (update.authorName !== author) process.stdout.write(`${author ? '\n\n' : ''}${(author = update.authorName)}: `);
      process.stdout.write(update.text);
    },
    error: reject,
    complete: resolve,
  }),
);
console.log('\n');

const reviewer = container.get(agentToken('reviewer'));
console.log(`The reviewer's assistant thread holds ${(await resumed.getChatMessages(reviewer)).length} messages.`);
await resumed.reset(); // deletes the assistant thread the chat made
console.log('Chat reset: service threads deleted.');
await emulator?.stop();
