import { expect } from 'chai';
import { type AgentThread, type AIAgent, type ChatMessage, messageText } from 'skein';

/** `role:text` per message (content kinds for messages without text), for comparing histories. */
export function texts(messages: readonly ChatMessage[]): string[] {
  return messages.map((m) => `${m.role}:${messageText(m) || m.contents.map((c) => c.kind).join(',')}`);
}

/** A thread where the user gave two names, in two turns (4 messages). */
export async function twoNames(agent: AIAgent, first: string, second: string): Promise<AgentThread> {
  const thread = agent.getNewThread();
  await agent.run(`My name is ${first}.`, { thread });
  await agent.run(`My name is ${second}.`, { thread });
  return thread;
}

/**
 * The fork scenario every service that forks by seeding a new thread must pass: fork after the
 * first answer, resume the fork in another container (`makeAgent` builds one), delete it there,
 * and the origin reads and continues as before.
 */
export async function expectSeededFork(makeAgent: () => AIAgent): Promise<void> {
  const agent = makeAgent();
  const thread = await twoNames(agent, 'Grace', 'Ida');
  const all = await agent.getMessages(thread);
  const fork = await agent.forkThread(thread, { at: 1 });
  expect(fork.serviceThreadId).to.match(/^thread_/).and.not.equal(thread.serviceThreadId);
  expect(texts(await agent.getMessages(fork))).to.deep.equal(texts(all.slice(0, 2)));

  const other = makeAgent();
  const resumed = await other.deserializeThread(JSON.parse(JSON.stringify(await fork.serialize())));
  expect((await other.run("What's my name?", { thread: resumed })).text).to.equal('Your name is Grace.');
  await other.deleteThread(resumed);
  expect(texts(await agent.getMessages(thread))).to.deep.equal(texts(all));
  expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Ida.');
}
