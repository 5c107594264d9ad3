import { expect } from 'chai';
import OpenAI from 'openai';
import { type AgentConfig, agentToken, ConfigurationError, createContainer, SerializationError } from 'skein';
import { type OpenAIAssistantAgent, openaiPlugin } from 'skein/openai';
import { emulatorClientPerTest } from '../support/emulator.js';

describe('Assistants from config: every key reaches the agent or is reported', () => {
  const suite = emulatorClientPerTest();


  const agentOf = (config: Omit<AgentConfig, 'client'>) =>
    createContainer({ plugins: [openaiPlugin({ apiKey: 'test', baseURL: suite.emulator.openaiBaseURL, maxRetries: 0 })], agents: { desk: { client: 'openai-assistants', ...config } } }).get(
      agentToken('desk'),
    ) as OpenAIAssistantAgent;
  const problems = (config: Omit<AgentConfig, 'client'>): readonly string[] => {
    try {
      agentOf(config);
    } catch (error) {
      expect(error).to.be.instanceOf(ConfigurationError);
      return (error as ConfigurationError).problems;
    }
    return expect.fail('expected a ConfigurationError');
  };
  const lastRun = () => suite.emulator.requests.filter((r) => r.method === 'POST' && /\/runs$/.test(r.path)).at(-1)!.body as Record<string, unknown>;

  it('provider options reach the service: run options at the top level, metadata, topP, code interpreter files, maxToolIterations', async () => {
    const file = await suite.client.files.create({ file: await OpenAI.toFile(Buffer.from('a,b\n1,2\n'), 'data.csv'), purpose: 'assistants' });
    const agent = agentOf({
      model: 'gpt-test',
      maxPromptTokens: 900,
      parallelToolCalls: false,
      truncationMessageCount: 4,
      additionalInstructions: 'Be exact.',
      maxOutputTokens: 120,
      maxToolIterations: 2,
      metadata: { team: 'billing' },
      topP: 0.5,
      enableCodeInterpreter: true,
      codeInterpreterFileIds: [file.id],
      polling: { intervalMs: 1 },
    });
    await agent.run('hi', { thread: agent.getNewThread() });
    const stored = await suite.client.beta.assistants.retrieve(agent.id!);
    expect(stored.metadata).to.include({ team: 'billing' });
    expect(stored.top_p).to.equal(0.5);
    expect(stored.tool_resources?.code_interpreter?.file_ids).to.deep.equal([file.id]);
    expect(lastRun()).to.include({ max_prompt_tokens: 900, parallel_tool_calls: false, max_completion_tokens: 120, additional_instructions: 'Be exact.' });
    expect(lastRun().truncation_strategy).to.deep.equal({ type: 'last_messages', last_messages: 4 });
    expect(agent.definition.executionOptions?.toolCallBehavior).to.deep.equal({ maxToolRounds: 2 });
  });

  it('an unknown key, a key that means nothing for an assistant and a value of the wrong type are each reported, all at once', () => {
    const found = problems({ model: 'gpt-test', tempreature: 0.2, messageStore: 'in-memory', history: { maxMessages: 5 }, enableFileSearch: 'yes', vectorStoreIds: ['vs_1', 7], maxPromptTokens: -1 });
    expect(found).to.have.length(6);
    expect(found[0]).to.match(/^agents\.desk\.tempreature: unknown key for an openai-assistants agent\. Known keys: .*temperature/);
    expect(found.join('\n')).to.contain('agents.desk.messageStore: not used by openai-assistants agents');
    expect(found.join('\n')).to.contain('agents.desk.history: not used by openai-assistants agents');
    expect(found.join('\n')).to.contain('agents.desk.enableFileSearch: expected true or false, found "yes"');
    expect(found.join('\n')).to.contain('agents.desk.vectorStoreIds: expected an array of vector store ids');
    expect(found.join('\n')).to.contain('agents.desk.maxPromptTokens');
    expect(problems({ instructions: 'x', reuse: 'no' })).to.deep.equal([
      'agents.desk.reuse: expected true or false, found "no".',
      'agents.desk: an openai-assistants agent needs `model` (to create an assistant) or `assistantId` (to use one).',
    ]);
    expect(suite.emulator.requests).to.deep.equal([]);
  });

  it('run defaults too long for the assistant metadata are refused before any request, not by the service', async () => {
    const agent = agentOf({ model: 'gpt-test', additionalInstructions: 'Be careful. '.repeat(60) });
    const error = await agent.ensureAssistant().catch((e: unknown) => e);
    expect(error).to.be.instanceOf(SerializationError);
    expect((error as SerializationError).path).to.equal('definition.executionOptions');
    expect((error as Error).message).to.match(/at most 512/);
    expect(suite.emulator.requests).to.deep.equal([]);
    // The emulator holds metadata to the service's limit too.
    const refused = await suite.client.beta.assistants.create({ model: 'gpt-test', metadata: { long: 'x'.repeat(513) } }).catch((e: unknown) => e as { status: number });
    expect((refused as { status: number }).status).to.equal(400);
  });
});
