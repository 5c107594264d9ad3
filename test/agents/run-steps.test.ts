import { expect } from 'chai';
import { ChatAgent, type RunSteps, tool } from 'skein';
import { FakeChatClient } from 'skein/testing';
import { z } from 'zod';

describe('ChatAgent: the RunSteps seam a durable runner uses', () => {
  it('hands it every model call, tool call (with an idempotency key) and the append, innermost, in order', async () => {
    const log: string[] = [];
    const lookup = tool({ name: 'lookup', parameters: z.object({ q: z.string() }), execute: ({ q }, ctx) => (log.push(`tool ran key=${ctx.idempotencyKey}`), `found ${q}`) });
    const client = new FakeChatClient()
      .reply({ messages: [{ role: 'assistant', contents: [{ kind: 'function-call', callId: 'c1', name: 'lookup', arguments: '{"q":"x"}' }] }] })
      .reply('the answer');
    const agent = new ChatAgent({
      chatClient: client,
      tools: [lookup],
      middleware: {
        chatClient: [{ onChatRequest: (_ctx, next) => (log.push('model middleware'), next()) }],
        functionCall: [{ onFunctionCall: (_ctx, next) => (log.push('tool middleware'), next()) }],
      },
    });
    const steps: RunSteps = {
      callModel: (call) => (log.push('model step'), call()),
      invokeTool: (call, t, invoke) => (log.push(`tool step ${t.declaration.name} ${call.callId}`), invoke(`run-1:${call.callId}`)),
      appendTurn: (store, messages) => (log.push(`append ${messages.length}`), store.addMessages(messages)),
    };
    const thread = agent.getNewThread();
    const response = await agent.run('hi', { thread, steps });
    expect(response.text).to.equal('the answer');
    expect(log).to.deep.equal([
      'model middleware',
      'model step',
      'tool middleware',
      'tool step lookup c1',
      'tool ran key=run-1:c1',
      'model middleware',
      'model step',
      'append 4',
    ]);
    expect(await agent.getMessages(thread)).to.have.length(4);
  });

  it('a plain run gives tools no idempotency key', async () => {
    let key: string | undefined = 'unset';
    const probe = tool({ name: 'probe', parameters: z.object({}), execute: (_args, ctx) => ((key = ctx.idempotencyKey), 'ok') });
    const client = new FakeChatClient()
      .reply({ messages: [{ role: 'assistant', contents: [{ kind: 'function-call', callId: 'c1', name: 'probe', arguments: '{}' }] }] })
      .reply('done');
    await new ChatAgent({ chatClient: client, tools: [probe] }).run('hi');
    expect(key).to.equal(undefined);
  });
});
