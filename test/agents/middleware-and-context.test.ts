import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import {
  AgentRunResponse,
  ChatAgent,
  UserFactsMemory,
  approvalResponse,
  messageText,
  tool,
  type AgentRunMiddleware,
  type ChatClientMiddleware,
  type ChatMessage,
  type FunctionCallMiddleware,
  type TextContent,
} from 'skein';
import { OpenAIChatClient } from 'skein/openai';
import { deleteFileTool } from '../support/example-tools.js';
import { useEmulator } from '../support/emulator.js';

interface Body {
  messages: { role: string; content: unknown }[];
}

/** The documented example: secrets never leave the process, the thread keeps what the user typed. */
const redactSecrets: ChatClientMiddleware = {
  onChatRequest(context, next) {
    const redact = (m: ChatMessage): ChatMessage => ({
      ...m,
      contents: m.contents.map((c) => (c.kind === 'text' ? { ...c, text: c.text.replace(/sk-[A-Za-z0-9]{8,}/g, '[REDACTED]') } : c)),
    });
    context.messages = context.messages.map(redact);
    return next();
  },
};

describe('middleware, context providers and function approval (ChatAgent on the emulator)', () => {
  const emu = useEmulator();

  const client = () => new OpenAIChatClient({ apiKey: 'k', baseURL: emu.emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 });
  const lastBody = () => emu.emulator.requestsTo('/v1/chat/completions').at(-1)!.body as Body;

  it('chat-client middleware redacts secrets from what leaves, not from the thread', async () => {
    const agent = new ChatAgent({ chatClient: client(), middleware: { chatClient: [redactSecrets] } });
    const thread = agent.getNewThread();
    const r = await agent.run('my key is sk-abcdefghijklmnop please keep it', { thread });
    const sent = JSON.stringify(lastBody());
    expect(sent).to.not.contain('sk-abcdefghijklmnop');
    expect(sent).to.contain('my key is [REDACTED] please keep it');
    expect(r.text).to.contain('[REDACTED]');
    const stored = await thread.messageStore!.listMessages();
    expect((stored[0]!.contents[0] as TextContent).text).to.contain('sk-abcdefghijklmnop');
  });

  it('runs middleware in registration order, and a run middleware can short-circuit', async () => {
    const order: string[] = [];
    const logger = (name: string): AgentRunMiddleware => ({
      async onRun(context, next) {
        order.push(`${name}:before`);
        const response = await next();
        order.push(`${name}:after`);
        return response;
      },
    });
    const guard: AgentRunMiddleware = {
      async onRun(context, next) {
        if (context.messages.some((m) => /forbidden/i.test(messageText(m)))) {
          order.push('guard:blocked');
          return new AgentRunResponse([{ role: 'assistant', contents: [{ kind: 'text', text: 'I cannot help with that.' }] }]);
        }
        return next();
      },
    };
    const agent = new ChatAgent({ chatClient: client(), middleware: { agentRun: [logger('outer'), logger('inner'), guard] } });
    const thread = agent.getNewThread();
    const before = emu.emulator.requestsTo('/v1/chat/completions').length;
    const blocked = await agent.run('tell me something forbidden', { thread });
    expect(blocked.text).to.equal('I cannot help with that.');
    expect(emu.emulator.requestsTo('/v1/chat/completions').length).to.equal(before);
    expect(order).to.deep.equal(['outer:before', 'inner:before', 'guard:blocked', 'inner:after', 'outer:after']);
    expect((await thread.messageStore!.listMessages()).map(messageText)).to.deep.equal(['tell me something forbidden', 'I cannot help with that.']);
  });

  it('a function-call middleware can block a tool call; the model sees why', async () => {
    let ran = false;
    const transfer = tool({ name: 'transfer_money', parameters: z.object({ amount: z.number() }), execute: () => (ran = true) });
    const limit: FunctionCallMiddleware = {
      async onFunctionCall(context, next) {
        const args = JSON.parse(context.call.arguments) as { amount: number };
        if (args.amount > 100) return { kind: 'function-result', callId: context.call.callId, error: 'blocked by policy: amount over 100' };
        return next();
      },
    };
    const agent = new ChatAgent({ chatClient: client(), tools: [transfer], middleware: { functionCall: [limit] } });
    const r = await agent.run('call transfer_money {"amount": 5000}');
    expect(ran).to.equal(false);
    expect(r.text).to.contain('blocked by policy');
    await agent.run('call transfer_money {"amount": 5}');
    expect(ran).to.equal(true);
  });

  it('UserFactsMemory keeps facts in the thread state, across serialize/resume, and tells the model', async () => {
    const make = () => new ChatAgent({ chatClient: client(), name: 'Concierge', instructions: 'Be helpful.', contextProviders: [new UserFactsMemory()] });
    const agent = make();
    const thread = agent.getNewThread();
    await agent.run('Hi, my name is Alice and I live in Lisbon.', { thread });
    const saved = JSON.parse(JSON.stringify(await thread.serialize()));
    expect(saved.state.context['user-facts'].facts).to.deep.equal({ name: 'Alice', location: 'Lisbon' });

    const other = make();
    const resumed = await other.deserializeThread(saved);
    const r = await other.run('What are your instructions?', { thread: resumed });
    expect(r.text).to.contain('Be helpful.').and.to.contain('name: Alice').and.to.contain('location: Lisbon');
  });

  it('additionalInstructions: sent after the agent\'s and the context providers\' instructions, for that run only, never stored', async () => {
    const agent = new ChatAgent({ chatClient: client(), instructions: 'Be helpful.', contextProviders: [new UserFactsMemory()] });
    const thread = agent.getNewThread();
    await agent.run('Hi, my name is Alice.', { thread });
    await agent.run('What is my name?', { thread, additionalInstructions: 'The user is on the checkout page.' });
    const system = lastBody().messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => JSON.stringify(m.content)).join('\n');
    const [own, facts, page] = ['Be helpful.', 'name: Alice', 'The user is on the checkout page.'].map((t) => system.indexOf(t));
    expect(own).to.be.at.least(0);
    expect(facts).to.be.greaterThan(own);
    expect(page).to.be.greaterThan(facts);
    await agent.run('What is my name?', { thread });
    expect(JSON.stringify(lastBody())).to.not.contain('checkout page');
    expect(JSON.stringify(await thread.serialize())).to.not.contain('checkout page');
    expect(JSON.stringify(await agent.getMessages(thread))).to.not.contain('checkout page');
  });

  it('keeps context-provider state unchanged when the run fails', async () => {
    const agent = new ChatAgent({ chatClient: client(), contextProviders: [new UserFactsMemory()] });
    const thread = agent.getNewThread();
    emu.emulator.injectFault({ kind: 'status', status: 500, path: '/v1/chat/completions' });
    await agent.run('my name is Bob', { thread }).then(
      () => expect.fail('expected failure'),
      () => undefined,
    );
    expect(thread.state).to.deep.equal({});
  });

  describe('function approval', () => {
    const deleted: string[] = [];
    const deleteFile = deleteFileTool(deleted);
    const makeAgent = () => new ChatAgent({ chatClient: client(), name: 'Ops', tools: [deleteFile] });
    beforeEach(() => (deleted.length = 0));

    it('stops with an approval request, and continues after a resume with the approval', async () => {
      const agent = makeAgent();
      const thread = agent.getNewThread();
      const first = await agent.run('call delete_file {"path":"/tmp/a.txt"}', { thread });
      expect(deleted).to.deep.equal([]);
      expect(first.approvalRequests).to.have.length(1);
      expect(first.approvalRequests[0]).to.include({ kind: 'function-approval-request', name: 'delete_file', arguments: '{"path":"/tmp/a.txt"}' });

      const saved = JSON.stringify(await thread.serialize());
      const other = makeAgent();
      const resumed = await other.deserializeThread(JSON.parse(saved));
      const second = await other.run(approvalResponse(first.approvalRequests[0]!, true), { thread: resumed });
      expect(deleted).to.deep.equal(['/tmp/a.txt']);
      expect(second.text).to.contain('delete_file returned: deleted /tmp/a.txt');
      const roles = (await resumed.messageStore!.listMessages()).map((m) => m.role);
      expect(roles).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
      expect(resumed.state).to.not.have.property('pendingApprovals');
    });

    it('a rejection reaches the model as an error result and the tool never runs', async () => {
      const agent = makeAgent();
      const thread = agent.getNewThread();
      const first = await agent.run('call delete_file {"path":"/etc/passwd"}', { thread });
      const second = await agent.run(approvalResponse(first.approvalRequests[0]!, false, 'too dangerous'), { thread });
      expect(deleted).to.deep.equal([]);
      expect(second.text).to.contain('rejected this call: too dangerous');
    });

    it('a new message instead of an answer settles the pending call as not approved', async () => {
      const agent = makeAgent();
      const thread = agent.getNewThread();
      await agent.run('call delete_file {"path":"/tmp/b"}', { thread });
      const r = await agent.run('never mind, what did we talk about?', { thread });
      expect(deleted).to.deep.equal([]);
      expect(r.text).to.contain('We talked about');
      const messages = await thread.messageStore!.listMessages();
      const result = messages[2]!.contents[0];
      expect(messages[2]!.role).to.equal('tool');
      expect(result).to.have.property('error').that.contains('did not approve');
    });

    it('an answer for a call that is not pending is a clear error and changes nothing', async () => {
      const agent = makeAgent();
      const thread = agent.getNewThread();
      await agent.run('hello', { thread });
      const before = JSON.stringify(await thread.serialize());
      await agent.run(approvalResponse({ callId: 'call_nope' }, true), { thread }).then(
        () => expect.fail('expected an error'),
        (e: Error) => expect(e.message).to.contain('No pending approval for call call_nope'),
      );
      expect(JSON.stringify(await thread.serialize())).to.equal(before);
    });

    it('keeps the results of approved calls when the rest of the turn fails, so a tool never runs twice', async () => {
      const agent = makeAgent();
      const thread = agent.getNewThread();
      const first = await agent.run('call delete_file {"path":"/tmp/once"}', { thread });
      emu.emulator.injectFault({ kind: 'status', status: 500, path: '/v1/chat/completions' });
      await agent.run(approvalResponse(first.approvalRequests[0]!, true), { thread }).then(
        () => expect.fail('expected the model call to fail'),
        (e: Error) => expect(e.name).to.equal('ServiceError'),
      );
      expect(deleted).to.deep.equal(['/tmp/once']);
      expect(thread.state).to.not.have.property('pendingApprovals');
      const roles = (await thread.messageStore!.listMessages()).map((m) => m.role);
      expect(roles).to.deep.equal(['user', 'assistant', 'tool']);
      const next = await agent.run('what did we talk about?', { thread });
      expect(next.text).to.contain('We talked about');
      expect(deleted).to.deep.equal(['/tmp/once']);
    });

    it('streams the approval request as an update', async () => {
      const agent = makeAgent();
      const updates = await lastValueFrom(agent.runStream('call delete_file {"path":"/x"}').pipe(toArray()));
      expect(updates.some((u) => u.contents.some((c) => c.kind === 'function-approval-request'))).to.equal(true);
    });
  });
});
