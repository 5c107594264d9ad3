import { expect } from 'chai';
import OpenAI from 'openai';
import { lastValueFrom, toArray } from 'rxjs';
import { type AgentRunResponseUpdate, type AIAgent, agentToken, approvalResponse, createContainer } from 'skein';
import { OpenAIAssistantAgent, openaiPlugin } from 'skein/openai';
import { approvalSuite } from '../support/approval-suite.js';
import { deleteFileTool } from '../support/example-tools.js';
import { failure } from './emulator-client.js';

/** Issue 28 §2: an Assistants agent never runs a tool that needs approval without one. */
describe('OpenAIAssistantAgent: tools that need approval (real openai SDK, emulator)', () => {
  const suite = approvalSuite();
  const { deleted, weatherCalls } = suite;
  let client: OpenAI;
  const newAgent = () => OpenAIAssistantAgent.create(client, { model: 'gpt-test', name: 'ops' }, { tools: suite.tools(), polling: { intervalMs: 1 } });
  const runsOf = async (threadId: string) => (await client.beta.threads.runs.list(threadId)).data;
  const textOf = (updates: AgentRunResponseUpdate[]) => updates.map((u) => u.text).join('');

  beforeEach(() => {
    client = new OpenAI({ apiKey: 'test', baseURL: suite.emulator.openaiBaseURL, maxRetries: 0 });
  });

  it('stops with an approval request instead of running the tool; the waiting run is cancelled on the service', async () => {
    const agent = await newAgent();
    const thread = agent.getNewThread();
    const asked = await agent.run('call delete_file {"path":"/tmp/a"}', { thread });
    expect(deleted).to.deep.equal([]);
    expect(asked.approvalRequests.map((r) => [r.name, r.arguments])).to.deep.equal([['delete_file', '{"path":"/tmp/a"}']]);
    expect(asked.messages.flatMap((m) => m.contents.map((c) => c.kind))).to.include('function-call');
    const [run] = await runsOf(thread.serviceThreadId!);
    expect(run!.status).to.equal('cancelled');
  });

  it('approved: the tool runs exactly once and the model reads its result in the same turn', async () => {
    const agent = await newAgent();
    const thread = agent.getNewThread();
    const asked = await agent.run('call delete_file {"path":"/tmp/a"}', { thread });
    const approved = await agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread });
    expect(deleted).to.deep.equal(['/tmp/a']);
    expect(approved.text).to.equal('delete_file returned: deleted /tmp/a');
    expect(approved.approvalRequests).to.deep.equal([]);
    const again = await failure(agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread }));
    expect((again as Error).message).to.contain(`No pending approval for call ${asked.approvalRequests[0]!.callId}`);
    expect(deleted).to.deep.equal(['/tmp/a']);
  });

  it('rejected: the tool never runs and the model reads the rejection', async () => {
    const agent = await newAgent();
    const thread = agent.getNewThread();
    const asked = await agent.run('call delete_file {"path":"/etc/passwd"}', { thread });
    const rejected = await agent.run(approvalResponse(asked.approvalRequests[0]!, false, 'not that one'), { thread });
    expect(deleted).to.deep.equal([]);
    expect(rejected.text).to.equal('delete_file returned: not run: the user rejected this call: not that one.');
  });

  it('streamed: the approval request is an update, the tool runs once after the approval', async () => {
    const agent = await newAgent();
    const thread = agent.getNewThread();
    const asked = await lastValueFrom(agent.runStream('call delete_file {"path":"/tmp/s"}', { thread }).pipe(toArray()));
    const request = asked.flatMap((u) => u.contents).find((c) => c.kind === 'function-approval-request');
    expect(request).to.include({ name: 'delete_file' });
    expect(deleted).to.deep.equal([]);
    const answered = await lastValueFrom(agent.runStream(approvalResponse(request as { callId: string }, true), { thread }).pipe(toArray()));
    expect(deleted).to.deep.equal(['/tmp/s']);
    expect(textOf(answered)).to.equal('delete_file returned: deleted /tmp/s');
  });

  it('a call beside the pending one runs at once, once; the model reads both results after the answer', async () => {
    const agent = await newAgent();
    const thread = agent.getNewThread();
    const asked = await agent.run('call get_weather {"city":"Bern"} and call delete_file {"path":"/tmp/b"}', { thread });
    expect(weatherCalls).to.deep.equal(['Bern']);
    expect(asked.approvalRequests.map((r) => r.name)).to.deep.equal(['delete_file']);
    const approved = await agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread });
    expect(weatherCalls).to.deep.equal(['Bern']);
    expect(deleted).to.deep.equal(['/tmp/b']);
    expect(approved.text).to.equal('get_weather returned: sunny in Bern\ndelete_file returned: deleted /tmp/b');
  });

  it('answered after the waiting run would have expired on the service: the model reads the result, the turn succeeds', async () => {
    suite.emulator.runExpirySeconds = 0; // a run waiting for tool outputs expires at the next request that reads it
    const agent = await newAgent();
    const thread = agent.getNewThread();
    const asked = await agent.run('call delete_file {"path":"/tmp/late"}', { thread });
    const approved = await agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread });
    expect(deleted).to.deep.equal(['/tmp/late']);
    expect(approved.text).to.equal('delete_file returned: deleted /tmp/late');
  });

  it('a plain new message settles the call as not approved; the model answers the message and later turns know it', async () => {
    const agent = await newAgent();
    const thread = agent.getNewThread();
    await agent.run('call delete_file {"path":"/tmp/c"} [please]', { thread });
    const moved = await agent.run('my name is Ada', { thread });
    expect(deleted).to.deep.equal([]);
    expect(moved.text).to.equal('Nice to meet you, Ada!');
    expect(thread.state).to.not.have.property('pendingApprovals');
    const later = await agent.run("what's my name?", { thread });
    expect(later.text).to.equal('Your name is Ada.');
    const notes = (await client.beta.threads.messages.list(thread.serviceThreadId!, { order: 'asc' })).data.filter((m) => m.metadata && (m.metadata as Record<string, string>).skein_kind === 'tool-results');
    expect(notes).to.have.length(1);
    expect(JSON.stringify(notes[0]!.content)).to.contain('did not approve this call before sending a new message');
  });

  it('a pending approval survives serialize and resume in a fresh container; the approval there runs the tool once', async () => {
    const config = () => ({
      plugins: [openaiPlugin({ apiKey: 'test', baseURL: suite.emulator.openaiBaseURL, maxRetries: 0 })],
      tools: [deleteFileTool(deleted)],
      agents: { ops: { client: 'openai-assistants', model: 'gpt-test', tools: ['delete_file'], polling: { intervalMs: 1 } } },
    });
    const first = createContainer(config()).get<AIAgent>(agentToken('ops'));
    const thread = first.getNewThread();
    const asked = await first.run('call delete_file {"path":"/tmp/r"}', { thread });
    const saved = JSON.parse(JSON.stringify(await thread.serialize())) as unknown;

    const second = createContainer(config()).get<AIAgent>(agentToken('ops'));
    const resumed = await second.deserializeThread(saved);
    const approved = await second.run(approvalResponse(asked.approvalRequests[0]!, true), { thread: resumed });
    expect(deleted).to.deep.equal(['/tmp/r']);
    expect(approved.text).to.equal('delete_file returned: deleted /tmp/r');
  });

  it('a turn that fails after the approved tool ran keeps its result: answering again sends it without running the tool twice', async () => {
    const agent = await newAgent();
    const thread = agent.getNewThread();
    const asked = await agent.run('call delete_file {"path":"/tmp/once"}', { thread });
    suite.emulator.injectFault({ kind: 'status', status: 500, method: 'POST', path: `/v1/threads/${thread.serviceThreadId}/runs` });
    await failure(agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread }));
    expect(deleted).to.deep.equal(['/tmp/once']);
    const again = await agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread });
    expect(deleted).to.deep.equal(['/tmp/once']);
    expect(again.text).to.equal('delete_file returned: deleted /tmp/once');
  });
});
