import { expect } from 'chai';
import { approvalResponse, ChatAgent, type FunctionCallContent, runToolCall, ToolApprovalRequiredError } from 'skein';
import { OpenAIChatClient, OpenAIResponsesClient } from 'skein/openai';
import { rejection } from '../support/async-expectations.js';
import { approvalSuite } from '../support/approval-suite.js';
import { deleteFileTool } from '../support/example-tools.js';

/** Issue 28 §2: the one enforcement point, and the chat loop that goes through it. */
describe('the approval gate (runToolCall) and the ChatAgent tool loop', () => {
  describe('runToolCall', () => {
    const deleted: string[] = [];
    const deleteFile = deleteFileTool(deleted);
    const call: FunctionCallContent = { kind: 'function-call', callId: 'call_1', name: 'delete_file', arguments: '{"path":"/tmp/x"}' };
    const invoke = () => deleteFile.invoke({ call, signal: new AbortController().signal });
    beforeEach(() => (deleted.length = 0));

    it('never runs a tool that needs approval without an answer to that very call', async () => {
      const missing = await rejection(runToolCall({ call, tool: deleteFile, invoke }));
      expect(missing).to.be.instanceOf(ToolApprovalRequiredError);
      expect((missing as Error).message).to.equal(
        'Tool "delete_file" needs the user\'s approval and call call_1 has none; it was not run. Stop the turn with an approval request and run the call with the answer (a function-approval-response for this call id).',
      );
      const otherCall = await rejection(runToolCall({ call, tool: deleteFile, invoke, approval: { kind: 'function-approval-response', callId: 'call_2', approved: true } }));
      expect(otherCall).to.be.instanceOf(ToolApprovalRequiredError);
      expect(deleted).to.deep.equal([]);
    });

    it('a rejection is an error result and the tool does not run; an approval runs it once', async () => {
      const rejected = await runToolCall({ call, tool: deleteFile, invoke, approval: { kind: 'function-approval-response', callId: 'call_1', approved: false, reason: 'no' } });
      expect(rejected).to.deep.equal({ kind: 'function-result', callId: 'call_1', error: 'not run: the user rejected this call: no.' });
      expect(deleted).to.deep.equal([]);
      const approved = await runToolCall({ call, tool: deleteFile, invoke, approval: { kind: 'function-approval-response', callId: 'call_1', approved: true } });
      expect(approved).to.deep.include({ callId: 'call_1', result: 'deleted /tmp/x' });
      expect(deleted).to.deep.equal(['/tmp/x']);
    });
  });

  describe('ChatAgent', () => {
    const suite = approvalSuite();
    const { deleted, weatherCalls } = suite;
    const chatAgent = () => new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'k', baseURL: suite.emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 }), tools: suite.tools() });

    it('does not run without approval, runs exactly once after it, never after a rejection', async () => {
      const agent = chatAgent();
      const thread = agent.getNewThread();
      const asked = await agent.run('call delete_file {"path":"/tmp/a"}', { thread });
      expect(deleted).to.deep.equal([]);
      await agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread });
      expect(deleted).to.deep.equal(['/tmp/a']);
      await rejection(agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread }));
      expect(deleted).to.deep.equal(['/tmp/a']);
      const again = await agent.run('call delete_file {"path":"/tmp/b"}', { thread });
      await agent.run(approvalResponse(again.approvalRequests[0]!, false), { thread });
      expect(deleted).to.deep.equal(['/tmp/a']);
    });

    it('on a service thread (Responses), a call that ran beside the pending one reaches the service with the answer, run once', async () => {
      const agent = new ChatAgent({ chatClient: new OpenAIResponsesClient({ apiKey: 'k', baseURL: suite.emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 }), tools: suite.tools() });
      const thread = agent.getNewThread();
      const asked = await agent.run('call get_weather {"city":"Rome"} and call delete_file {"path":"/tmp/c"}', { thread });
      expect(thread.serviceThreadId).to.be.a('string');
      expect(weatherCalls).to.deep.equal(['Rome']);
      expect(deleted).to.deep.equal([]);
      const approved = await agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread });
      expect(weatherCalls).to.deep.equal(['Rome']);
      expect(deleted).to.deep.equal(['/tmp/c']);
      expect(approved.text).to.equal('get_weather returned: sunny in Rome\ndelete_file returned: deleted /tmp/c');
      expect(thread.state).to.not.have.property('heldToolResults');
    });
  });
});
