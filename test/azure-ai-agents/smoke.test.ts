import { expect } from 'chai';
import { Emulator } from 'skein/testing';
import { createEmulatorAgentsClient } from '../../plugins/azure-ai-agents/emulator-connection.js';

describe('smoke', () => {
  it('works', async () => {
    const emulator = await Emulator.start();
    try {
      const client = createEmulatorAgentsClient(emulator.url);
      const agent = await client.createAgent('m', { name: 'a', instructions: 'be nice', tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }] });
      const thread = await client.threads.create();
      await client.messages.create(thread.id, 'user', 'My name is Ada');
      let run = await client.runs.create(thread.id, agent.id);
      while (run.status === 'queued' || run.status === 'in_progress') run = await client.runs.get(thread.id, run.id);
      expect(run.status).to.equal('completed');
      const msgs = [];
      for await (const m of client.messages.list(thread.id, { order: 'asc' })) msgs.push(m);
      console.log(JSON.stringify(msgs.map((m) => m.content)));
      await client.messages.create(thread.id, 'user', 'What is the weather in Paris?');
      const stream = await client.runs.create(thread.id, agent.id).stream();
      for await (const ev of stream) console.log(ev.event, JSON.stringify(ev.data).slice(0, 200));
    } finally {
      await emulator.stop();
    }
  });
});
