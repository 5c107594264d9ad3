import type { AgentsClient } from '@azure/ai-agents';
import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';
import { type AIAgent, agentToken, approvalResponse, createContainer } from 'skein';
import { AzureAIAgent, azureAIAgentsPlugin, createEmulatorAgentsClient, emulatorConnection } from 'skein/azure-ai-agents';
import { approvalSuite } from '../support/approval-suite.js';
import { deleteFileTool } from '../support/example-tools.js';

/** Issue 28 §2: Foundry agents and tools that need approval, including runs that expire while the user decides. */
describe('AzureAIAgent: tools that need approval (real @azure/ai-agents client, emulator)', () => {
  const suite = approvalSuite({ apiKey: 'foundry-token' });
  const { deleted, weatherCalls } = suite;
  let client: AgentsClient;
  const newAgent = () => new AzureAIAgent({ client, model: 'gpt-4o', name: 'ops', tools: suite.tools(), pollIntervalMs: 1 });
  const serviceMessages = async (threadId: string) => {
    const out: { role: string; text: string }[] = [];
    for await (const m of client.messages.list(threadId, { order: 'asc' })) {
      out.push({ role: m.role, text: m.content.map((c) => (c.type === 'text' ? (c as { text: { value: string } }).text.value : '')).join('') });
    }
    return out;
  };

  beforeEach(() => {
    client = createEmulatorAgentsClient(suite.url, { token: 'foundry-token', clientOptions: { retryOptions: { maxRetries: 0 } } });
  });


  it('asks first; approved, the tool runs exactly once; rejected, never', async () => {
    const agent = newAgent();
    const thread = agent.getNewThread();
    const asked = await agent.run('call delete_file {"path":"/tmp/a"}', { thread });
    expect(deleted).to.deep.equal([]);
    const approved = await agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread });
    expect(deleted).to.deep.equal(['/tmp/a']);
    expect(approved.text).to.equal('delete_file returned: deleted /tmp/a');

    const again = await agent.run('call delete_file {"path":"/etc/passwd"}', { thread });
    const rejected = await agent.run(approvalResponse(again.approvalRequests[0]!, false, 'no'), { thread });
    expect(deleted).to.deep.equal(['/tmp/a']);
    expect(rejected.text).to.contain('rejected this call: no');
  });

  it('approved after the waiting run expired: the tool runs once, the model reads the result, the turn succeeds', async () => {
    suite.emulator.runExpirySeconds = 0; // a run waiting for tool outputs expires at the next request that reads it
    const agent = newAgent();
    const thread = agent.getNewThread();
    const asked = await agent.run('call delete_file {"path":"/tmp/late"}', { thread });
    const [waiting] = (await client.runs.list(thread.serviceThreadId!, { order: 'desc', limit: 1 }).byPage().next()).value as { status: string }[];
    expect(waiting!.status).to.equal('expired');
    const approved = await agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread });
    expect(deleted).to.deep.equal(['/tmp/late']);
    expect(approved.text).to.equal('delete_file returned: deleted /tmp/late');
    expect(thread.state).to.not.have.property('pendingApprovals');
  });

  it('streamed: approved after the waiting run expired, the result streams back and the model reads it', async () => {
    suite.emulator.runExpirySeconds = 0;
    const agent = newAgent();
    const thread = agent.getNewThread();
    const asked = await lastValueFrom(agent.runStream('call delete_file {"path":"/tmp/s"}', { thread }).pipe(toArray()));
    const request = asked.flatMap((u) => u.contents).find((c) => c.kind === 'function-approval-request') as { callId: string } | undefined;
    expect(request).to.not.equal(undefined);
    expect(deleted).to.deep.equal([]);
    const answered = await lastValueFrom(agent.runStream(approvalResponse(request!, true), { thread }).pipe(toArray()));
    expect(deleted).to.deep.equal(['/tmp/s']);
    expect(answered.map((u) => u.text).join('')).to.equal('delete_file returned: deleted /tmp/s');
  });

  it('a call beside the pending one: both results reach the service with the answer (the run takes all outputs at once)', async () => {
    const agent = newAgent();
    const thread = agent.getNewThread();
    const asked = await agent.run('call get_weather {"city":"Oslo"} and call delete_file {"path":"/tmp/b"}', { thread });
    expect(weatherCalls).to.deep.equal(['Oslo']);
    const approved = await agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread });
    expect(weatherCalls).to.deep.equal(['Oslo']);
    expect(deleted).to.deep.equal(['/tmp/b']);
    expect(approved.text).to.equal('get_weather returned: sunny in Oslo\ndelete_file returned: deleted /tmp/b');
  });

  it('a plain new message settles the call as not approved and reaches the service thread; the model answers it and later turns know it', async () => {
    const agent = newAgent();
    const thread = agent.getNewThread();
    await agent.run('call delete_file {"path":"/tmp/c"}', { thread });
    const moved = await agent.run('my name is Ada', { thread });
    expect(deleted).to.deep.equal([]);
    expect(moved.text).to.equal('Nice to meet you, Ada!');
    const texts = (await serviceMessages(thread.serviceThreadId!)).map((m) => m.text);
    expect(texts).to.include('my name is Ada');
    expect(texts.some((t) => t.includes('did not approve this call before sending a new message'))).to.equal(true);
    const later = await agent.run("what's my name?", { thread });
    expect(later.text).to.equal('Your name is Ada.');
  });

  it('a pending approval survives serialize and resume in a fresh container, after the run expired; the approval there runs the tool once', async () => {
    suite.emulator.runExpirySeconds = 0;
    const config = () => ({
      plugins: [azureAIAgentsPlugin({ ...emulatorConnection(suite.emulator.url, { token: 'foundry-token' }), pollIntervalMs: 1 })],
      tools: [deleteFileTool(deleted)],
      agents: { ops: { client: 'azure-ai-agents', model: 'gpt-4o', tools: ['delete_file'] } },
    });
    const first = (await createContainer(config())).get<AIAgent>(agentToken('ops'));
    const thread = first.getNewThread();
    const asked = await first.run('call delete_file {"path":"/tmp/r"}', { thread });
    const saved = JSON.parse(JSON.stringify(await thread.serialize())) as unknown;

    const second = (await createContainer(config())).get<AIAgent>(agentToken('ops'));
    const resumed = await second.deserializeThread(saved);
    const approved = await second.run(approvalResponse(asked.approvalRequests[0]!, true), { thread: resumed });
    expect(deleted).to.deep.equal(['/tmp/r']);
    expect(approved.text).to.equal('delete_file returned: deleted /tmp/r');
  });
});
