import { expect } from 'chai';
import OpenAI from 'openai';
import type { AgentsClient } from '@azure/ai-agents';
import { createEmulatorAgentsClient } from 'skein/azure-ai-agents';
import { emulatorPerTest } from '../support/emulator.js';
import { rejection } from '../support/async-expectations.js';

const weatherTool = { type: 'function' as const, function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

/** Issue 28 §2: runs waiting for tool outputs expire as the Assistants and Foundry documents say. */
describe('Emulator: run expiry (Assistants v2 and Foundry)', () => {

  describe('Assistants v2 (openai SDK)', () => {
    const running = emulatorPerTest();
    let client: OpenAI;
    beforeEach(() => {
      client = new OpenAI({ apiKey: 'k', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 });
    });

    const waitingRun = async () => {
      const assistant = await client.beta.assistants.create({ model: 'm', tools: [weatherTool] });
      const thread = await client.beta.threads.create({ messages: [{ role: 'user', content: 'call get_weather {"city":"Oslo"}' }] });
      let run = await client.beta.threads.runs.create(thread.id, { assistant_id: assistant.id });
      while (run.status !== 'requires_action') run = await client.beta.threads.runs.retrieve(run.id, { thread_id: thread.id });
      return run;
    };

    it('a run expires 600 s after it was created by default, and takes tool outputs before that', async () => {
      const run = await waitingRun();
      expect(run.expires_at! - run.created_at).to.equal(600);
      const call = run.required_action!.submit_tool_outputs.tool_calls[0]!;
      const submitted = await client.beta.threads.runs.submitToolOutputs(run.id, { thread_id: run.thread_id, tool_outputs: [{ tool_call_id: call.id, output: 'sunny' }] });
      expect(submitted.status).to.equal('queued');
    });

    it('past expires_at a waiting run is expired, with its tool step, and refuses tool outputs with the service\'s error', async () => {
      running.emulator.runExpirySeconds = 0;
      const run = await waitingRun();
      const read = await client.beta.threads.runs.retrieve(run.id, { thread_id: run.thread_id });
      expect(read.status).to.equal('expired');
      expect(read.required_action).to.equal(null);
      const [step] = (await client.beta.threads.runs.steps.list(run.id, { thread_id: run.thread_id })).data;
      expect(step!.status).to.equal('expired');
      const call = run.required_action!.submit_tool_outputs.tool_calls[0]!;
      const error = await rejection(client.beta.threads.runs.submitToolOutputs(run.id, { thread_id: run.thread_id, tool_outputs: [{ tool_call_id: call.id, output: 'sunny' }] }));
      expect(error).to.be.instanceOf(OpenAI.BadRequestError);
      expect((error as Error).message).to.contain('Runs in status "expired" do not accept tool outputs.');
      // The thread is free again: a new run may start.
      const next = await client.beta.threads.runs.create(run.thread_id, { assistant_id: run.assistant_id });
      expect(next.status).to.equal('queued');
    });

    it('a bad knob value is a RangeError that names it', async () => {
      expect(() => (running.emulator.runExpirySeconds = -1)).to.throw(RangeError, 'runExpirySeconds must be a number of seconds >= 0; found -1.');
    });
  });

  describe('Foundry Agents (@azure/ai-agents)', () => {
    const running = emulatorPerTest({ runExpirySeconds: 0 });
    let client: AgentsClient;
    beforeEach(() => {
      client = createEmulatorAgentsClient(running.url, { clientOptions: { retryOptions: { maxRetries: 0 } } });
    });

    it('past expires_at a waiting run is expired and submitting tool outputs fails', async () => {
      const agent = await client.createAgent('gpt-4o', { tools: [weatherTool] });
      const thread = await client.threads.create({ messages: [{ role: 'user', content: 'call get_weather {"city":"Oslo"}' }] });
      let run = await client.runs.create(thread.id, agent.id);
      while (run.status !== 'requires_action') run = await client.runs.get(thread.id, run.id);
      expect(run.expiresAt).to.be.instanceOf(Date);
      const read = await client.runs.get(thread.id, run.id);
      expect(read.status).to.equal('expired');
      const error = await rejection(Promise.resolve(client.runs.submitToolOutputs(thread.id, run.id, [{ toolCallId: 'call_1', output: 'sunny' }])));
      expect((error as Error).message).to.contain("is 'expired', not 'requires_action'; it takes no tool outputs");
    });
  });
});
