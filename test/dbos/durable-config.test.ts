import { expect } from 'chai';
import { ChatAgent, ChatClient, ConfigurationError, type SkeinPlugin, agentToken, containerModule, createContainer, durableAgentToken } from 'skein';
import { DbosDurableRunner, dbosPlugin } from 'skein/dbos';
import { DATABASE_URL, RUN_ID } from './dbos-support.js';
import { ScriptedClient } from './fixtures/scripted-client.js';

const scriptedPlugin: SkeinPlugin = {
  id: 'scripted',
  clients: ['scripted'],
  module: containerModule(({ bind }) => {
    bind(ChatClient).toConstantValue(new ScriptedClient()).whenNamed('scripted');
  }),
};

describe('durable runs in config: durability: { engine: "dbos" }', () => {
  it('gives the agent a durable face from the dbos plugin runner', () => {
    const container = createContainer({
      plugins: [scriptedPlugin, dbosPlugin({ systemDatabaseUrl: DATABASE_URL, schema: `dbos_${RUN_ID}_cfg` })],
      agents: { configured: { client: 'scripted', durability: { engine: 'dbos', unrecordedTools: ['x'] } } },
    });
    const durable = container.get(durableAgentToken('configured'));
    expect(durable.agent).to.equal(container.get(agentToken('configured')));
    expect(durable.agent).to.be.instanceOf(ChatAgent);
    // Not launched: starting a run says what to do.
    return durable.start('hi').then(
      () => expect.fail('expected an error'),
      (error: unknown) => expect((error as Error).message).to.match(/not launched: call runner.launch\(\)/),
    ).finally(() => expect(container.get(DbosDurableRunner).engine).to.equal('dbos'));
  });

  it('an engine no loaded plugin provides is a configuration problem with its path', () => {
    expect(() => createContainer({ plugins: [scriptedPlugin], agents: { a: { client: 'scripted', durability: { engine: 'temporal' } } } }))
      .to.throw(ConfigurationError)
      .with.property('message')
      .that.matches(/agents\.a\.durability\.engine: expected a durable engine a loaded plugin provides \(none loaded\), found "temporal"/);
  });

  it('a durability entry of the wrong shape is a configuration problem saying what is expected', () => {
    const durability = { engine: 'dbos', unrecorded: ['x'] } as unknown as { engine: string };
    expect(() => createContainer({ plugins: [scriptedPlugin], agents: { a: { client: 'scripted', durability } } }))
      .to.throw(ConfigurationError)
      .with.property('message')
      .that.includes('agents.a.durability: expected an object { engine, unrecordedTools?: string[], stream?: boolean, streamDeltas?: boolean, queue?: string }, found {"engine":"dbos","unrecorded":["x"]}.');
  });
});
