import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { AgUiServer, FileAgUiThreadStore, type AgUiServerLogger } from 'skein/ag-ui';
import { Emulator } from 'skein/testing';
import { dropSchema } from '../stores/services.js';
import { AGENT_KINDS, HttpAgent, PG_SCHEMA, type ToolLog, agentsOn, lastText, postRaw, runVerified, say, tempDir, types } from './ag-ui-fixture.js';

describe('skein/ag-ui: AgUiServer driven by the official @ag-ui/client HttpAgent', () => {
  let emulator: Emulator;
  let dir: string;
  let log: ToolLog;
  let setup: Awaited<ReturnType<typeof agentsOn>>;
  let server: AgUiServer;
  let base: string;
  const errors: string[] = [];
  const logger: AgUiServerLogger = { warn: () => undefined, error: (message) => errors.push(message) };
  const servers: AgUiServer[] = [];

  async function serve(options: Partial<ConstructorParameters<typeof AgUiServer>[0]> = {}): Promise<string> {
    const s = new AgUiServer({ agents: setup.agents, threads: new FileAgUiThreadStore(path.join(dir, 'ag-ui-threads')), logger, ...options });
    servers.push(s);
    return `${await s.listen()}/agents`;
  }

  before(async () => {
    emulator = await Emulator.start();
    dir = await tempDir();
    log = { deleted: [] };
    setup = await agentsOn(emulator, dir, log);
  });
  beforeEach(async () => {
    base = await serve();
    server = servers[servers.length - 1]!;
  });
  afterEach(async () => {
    emulator.clearFaults();
    for (const s of servers.splice(0)) await s.close();
  });
  after(async () => {
    await setup.close();
    await emulator.stop();
    await rm(dir, { recursive: true, force: true });
    await dropSchema(PG_SCHEMA);
  });

  for (const kind of AGENT_KINDS) {
    it(`${kind}: agentic chat over two runs, in spec order, and a reload reads the thread back`, async () => {
      const agent = new HttpAgent({ url: `${base}/${kind}` });
      const first = await say(agent, 'My name is Ada.');
      expect(types(first.events)[0]).to.equal('RUN_STARTED');
      expect(types(first.events).at(-1)).to.equal('RUN_FINISHED');
      expect(types(first.events)).to.include.members(['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END']);
      expect(lastText(agent)).to.equal('Nice to meet you, Ada!');
      await say(agent, 'What is my name?');
      expect(lastText(agent)).to.equal('Your name is Ada.');

      // Another tab (or a reload): same threadId, no messages: it gets the thread as it is.
      const reload = new HttpAgent({ url: `${base}/${kind}`, threadId: agent.threadId });
      const { events } = await runVerified(reload);
      expect(types(events)).to.deep.equal(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
      expect(reload.messages.map((m) => [m.role, m.content])).to.deep.equal(agent.messages.map((m) => [m.role, m.content]));
      expect(reload.messages.map((m) => m.id)).to.deep.equal(agent.messages.map((m) => m.id));
      // ...and continues it.
      await say(reload, 'What is my name?');
      expect(lastText(reload)).to.equal('Your name is Ada.');
    });
  }
});
