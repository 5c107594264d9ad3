import { expect } from 'chai';
import type { Container } from 'inversify';
import {
  AbortError,
  AgentGroupChat,
  type AIAgent,
  type ChatMessage,
  type SelectionContext,
  SequentialSelectionStrategy,
  type SerializedAgentGroupChat,
  ServiceError,
  createContainer,
  messageText,
} from 'skein';
import { azureAIAgentsPlugin, createEmulatorAgentsClient } from 'skein/azure-ai-agents';
import { openaiPlugin } from 'skein/openai';
import { type Emulator, RESPONSES_INPUT_ITEMS_LISTINGS } from 'skein/testing';
import { emulatorPerTest } from '../support/emulator.js';
import { rejection, until } from './providers.js';

const NAMES = ['writer', 'reviewer', 'assistant', 'foundry'] as const;

function containerFor(emulator: Emulator): Container {
  return createContainer({
    plugins: [
      openaiPlugin({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 }),
      azureAIAgentsPlugin({ client: createEmulatorAgentsClient(emulator.url, { clientOptions: { retryOptions: { maxRetries: 0 } } }), pollIntervalMs: 1 }),
    ],
    agents: {
      writer: { client: 'openai-chat', model: 'gpt-test' },
      reviewer: { client: 'openai-responses', model: 'gpt-test' },
      assistant: { client: 'openai-assistants', model: 'gpt-test', polling: { intervalMs: 1 } },
      foundry: { client: 'azure-ai-agents', model: 'gpt-test', instructions: 'You check facts.' },
    },
  });
}

const texts = (messages: readonly ChatMessage[]) => messages.map(messageText);
const authors = (messages: readonly ChatMessage[]) => messages.map((m) => (m.role === 'user' ? 'user' : m.authorName));

/** In turn, like the default; calls `onPick` with each agent it picks, before that agent's turn. */
class ObservedSelection extends SequentialSelectionStrategy {
  constructor(private readonly onPick: (agent: AIAgent) => void) {
    super();
  }
  override next(context: SelectionContext): AIAgent {
    const agent = super.next(context);
    this.onPick(agent);
    return agent;
  }
}

/** Every channel holds exactly the chat: service channels read back from the service plus what waits for their next turn. */
async function expectChannelsConsistent(chat: AgentGroupChat): Promise<void> {
  const all = texts(await chat.getChatMessages());
  for (const agent of chat.agents) expect(texts(await chat.getChatMessages(agent)), `channel of ${agent.name}`).to.deep.equal(all);
}

// Both ways a server lists a continuing response's input_items (the Responses channel reads its history from them).
for (const listing of RESPONSES_INPUT_ITEMS_LISTINGS) describe(`reliability: a group chat under faults keeps every channel consistent (Responses input_items: ${listing})`, function () {
  this.timeout(30_000);

  const running = emulatorPerTest({ responsesInputItems: listing });

  // 'abort' strikes as the victim's turn starts; 'abort in flight' once its request is out, only
  // for agents whose failed input no service keeps (see docs/reliability.md, service threads).
  type Fault = 'HTTP 500' | 'abort' | 'abort in flight';
  const cases: [Fault, (typeof NAMES)[number]][] = [
    ...NAMES.map((n): [Fault, (typeof NAMES)[number]] => ['HTTP 500', n]),
    ...NAMES.map((n): [Fault, (typeof NAMES)[number]] => ['abort', n]),
    ['abort in flight', 'writer'],
    ['abort in flight', 'reviewer'],
  ];
  for (const [fault, victim] of cases) {
      it(`${fault} during ${victim}'s turn of invoke(): typed error, the serialized chat gains only the acknowledged turns, channels consistent, the chat goes on`, async () => {
        const container = containerFor(running.emulator);
        let armed = false;
        let pickedAt = -1;
        const controller = new AbortController();
        const selection = new ObservedSelection((agent) => {
          if (!armed || agent.name !== victim) return;
          armed = false;
          pickedAt = running.emulator.requests.length;
          // No path: the next request of this turn, whichever endpoint the agent calls first.
          if (fault === 'HTTP 500') running.emulator.injectFault({ kind: 'status', status: 500 });
          else if (fault === 'abort in flight') running.emulator.injectFault({ kind: 'latency', ms: 2_000 });
          else controller.abort();
        });
        const chat = AgentGroupChat.fromContainer(container, { agents: [...NAMES], selection });
        await chat.addChatMessage('My name is Ada');
        await chat.invoke();
        await chat.addChatMessage('Tell me about otters');
        const before = (await chat.serialize()) as SerializedAgentGroupChat;

        armed = true;
        const pending = chat.invoke({ signal: controller.signal });
        if (fault === 'abort in flight') {
          await until(() => pickedAt >= 0 && running.emulator.requests.length > pickedAt);
          controller.abort();
        }
        const error = await rejection(pending);
        expect(error).to.be.instanceOf(fault === 'HTTP 500' ? ServiceError : AbortError);
        expect(chat.isBusy).to.equal(false);
        running.emulator.clearFaults();

        // Acknowledged: the turns before the victim's. Nothing of the victim's turn, anywhere.
        const spokeFirst = NAMES.slice(0, NAMES.indexOf(victim));
        const after = (await chat.serialize()) as SerializedAgentGroupChat;
        expect(after.messages.slice(0, before.messages.length)).to.deep.equal(before.messages);
        expect(authors(after.messages.slice(before.messages.length))).to.deep.equal(spokeFirst);
        expect(after.agents).to.deep.equal(before.agents);
        await expectChannelsConsistent(chat);

        // It goes on: the rotation resumes with the victim, in this process and in another one.
        const resumed = await AgentGroupChat.deserialize(JSON.parse(JSON.stringify(after)) as unknown, { container: containerFor(running.emulator) });
        expect(texts(await resumed.getChatMessages())).to.deep.equal(texts(after.messages));
        const rest = await chat.invoke();
        expect(authors(rest)).to.deep.equal([...NAMES.slice(NAMES.indexOf(victim)), ...spokeFirst]);
        await expectChannelsConsistent(chat);
      });
  }
});
