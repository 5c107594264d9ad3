import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { type AgentConfig, agentToken, createContainer } from 'skein';
import { OpenAIAssistantAgent, openaiPlugin } from 'skein/openai';
import { emulatorClientPerTest } from '../support/emulator.js';

const PROCESS = join(fileURLToPath(new URL('.', import.meta.url)), 'fixtures', 'definition-process.js');
const run = promisify(execFile);

interface ProcessResult {
  assistantId: string;
  thread: unknown;
  text: string;
}

describe('Assistants: an agent definition makes one assistant, however many containers and processes use it', () => {
  const suite = emulatorClientPerTest();


  const definition: AgentConfig = { client: 'openai-assistants', model: 'gpt-test', instructions: 'Be brief.', polling: { intervalMs: 1 } };
  const assistants = async () => (await suite.client.beta.assistants.list({ limit: 100 })).data;
  const container = (agent: AgentConfig = definition) =>
    createContainer({ plugins: [openaiPlugin({ apiKey: 'test', baseURL: suite.emulator.openaiBaseURL, maxRetries: 0 })], agents: { support: agent } });
  const agentOf = (agent?: AgentConfig) => container(agent).get(agentToken('support')) as OpenAIAssistantAgent;
  const inProcess = async (input: string, agent: AgentConfig = definition, thread?: unknown): Promise<ProcessResult> => {
    const { stdout } = await run(process.execPath, [PROCESS, JSON.stringify({ baseURL: suite.emulator.openaiBaseURL, agent, input, thread })]);
    return JSON.parse(stdout) as ProcessResult;
  };

  it('four containers starting at once, then two more processes: one assistant on the service', async () => {
    const agents = [agentOf(), agentOf(), agentOf(), agentOf()];
    const answers = await Promise.all(agents.map((a, i) => a.run(`hello ${i}`, { thread: a.getNewThread() })));
    expect(answers.map((a) => a.text)).to.have.length(4);
    const first = await assistants();
    expect(first).to.have.length(1);
    expect(new Set(agents.map((a) => a.id))).to.deep.equal(new Set([first[0]!.id]));
    expect(first[0]!.metadata).to.include({ skein_definition: 'name:support' });
    const one = await inProcess('hi');
    const two = await inProcess('hi again');
    expect([one.assistantId, two.assistantId]).to.deep.equal([first[0]!.id, first[0]!.id]);
    expect((await assistants()).map((a) => a.id)).to.deep.equal([first[0]!.id]);
    // The user's metadata view is clean: Skein's keys stay out of the definition.
    expect(agents[0]!.definition.metadata).to.equal(undefined);
  });

  it('a changed definition updates the same assistant in place; an unchanged one sends no update', async () => {
    await agentOf().ensureAssistant();
    const [before] = await assistants();
    await agentOf().ensureAssistant();
    expect(suite.emulator.requests.filter((r) => r.method === 'POST' && r.path === `/v1/assistants/${before!.id}`)).to.deep.equal([]);
    const changed = agentOf({ ...definition, instructions: 'Answer in French.', maxCompletionTokens: 50 });
    await changed.ensureAssistant();
    const after = await assistants();
    expect(after.map((a) => a.id)).to.deep.equal([before!.id]);
    expect(after[0]!.instructions).to.equal('Answer in French.');
    expect(after[0]!.metadata!.skein_fingerprint).not.to.equal(before!.metadata!.skein_fingerprint);
    expect(changed.definition.executionOptions).to.deep.equal({ maxCompletionTokens: 50 });
    // Removing a field clears it on the service.
    await agentOf({ client: 'openai-assistants', model: 'gpt-test' }).ensureAssistant();
    expect((await suite.client.beta.assistants.retrieve(before!.id)).instructions).to.equal(null);
  });

  it('a resumed thread runs on the assistant it was made with, in another process', async () => {
    // Process 1 runs on an assistant named by id ...
    const v1 = await suite.client.beta.assistants.create({ model: 'gpt-test', name: 'support', instructions: 'Old instructions.' });
    const started = await inProcess('My name is Ada.', { ...definition, assistantId: v1.id });
    expect(started.thread).to.deep.nested.include({ 'state.openaiAssistants.assistantId': v1.id });
    // ... process 2 is configured from the definition (its own assistant) and resumes that thread.
    const resumed = await inProcess("What's my name?", definition, started.thread);
    expect(resumed.text).to.equal('Your name is Ada.');
    expect(resumed.assistantId).not.to.equal(v1.id);
    const runs = suite.emulator.requests.filter((r) => r.method === 'POST' && /\/runs$/.test(r.path)).map((r) => (r.body as { assistant_id: string }).assistant_id);
    expect(runs).to.deep.equal([v1.id, v1.id]);
    // A new thread of process 2 runs on the definition's assistant.
    const fresh = await inProcess('hello');
    expect((fresh.thread as { state: { openaiAssistants: { assistantId: string } } }).state.openaiAssistants.assistantId).to.equal(resumed.assistantId);
  });

  it('delete() is the explicit way out: it deletes the assistant; the next use creates a new one', async () => {
    const agent = agentOf();
    await agent.run('hi', { thread: agent.getNewThread() });
    const [made] = await assistants();
    // An agent of the same definition that was never used deletes it too.
    await agentOf().delete();
    expect(await assistants()).to.deep.equal([]);
    await agentOf().ensureAssistant();
    const [again] = await assistants();
    expect(again!.id).not.to.equal(made!.id);
  });

  it('create() still makes a new assistant each time; fromDefinition() finds the one a container made', async () => {
    const made = await agentOf().ensureAssistant();
    const found = await OpenAIAssistantAgent.fromDefinition(suite.client, { model: 'gpt-test', name: 'support', instructions: 'Be brief.' });
    expect(found.id).to.equal(made.id);
    const fresh = await OpenAIAssistantAgent.create(suite.client, { model: 'gpt-test', name: 'support', instructions: 'Be brief.' });
    expect(fresh.id).not.to.equal(made.id);
  });
});
