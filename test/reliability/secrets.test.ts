import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import sinon from 'sinon';
import { type AIAgent, ConfigurationError, createContainer } from 'skein';
import { ALL_PROVIDERS, type HarnessSecrets, captureConsole, harnessPerTest, rejection, snapshot } from './providers.js';

const SECRETS: HarnessSecrets = {
  apiKey: 'sk-SECRET-openai-7f3a9c2e',
  azureToken: 'az-SECRET-token-91c2d4',
  a2aToken: 'a2a-SECRET-header-55d1b7',
};
const PG_PASSWORD = 'pg-SECRET-pass-3e8f0a';
const ALL = [...Object.values(SECRETS), PG_PASSWORD];

/** Everything an error exposes: message, stack, own properties and its cause chain, deeply. */
function errorText(error: unknown): string {
  const parts = [inspect(error, { depth: 8, showHidden: false, getters: false })];
  for (let e: unknown = error, i = 0; e instanceof Error && i < 10; e = e.cause, i++) parts.push(e.message, e.stack ?? '');
  return parts.join('\n');
}

function expectClean(text: string, where: string): void {
  for (const secret of ALL) expect(text.includes(secret), `${where} contains ${secret}`).to.equal(false);
}

describe('reliability: secrets never leak into threads, errors or logs', function () {
  this.timeout(20_000);
  afterEach(() => sinon.restore());
  const ctx = harnessPerTest();
  let logged: string[];

  beforeEach(() => {
    logged = captureConsole();
  });

  for (const provider of ALL_PROVIDERS) {
    it(`${provider.id}: serialized threads, failures (5xx, 401, cut stream) and logs hold none of the configured secrets`, async () => {
      ctx.harness = await provider.create(ctx.emulator, { secrets: SECRETS });
      const agent: AIAgent = ctx.harness.agent;
      const thread = agent.getNewThread();
      await agent.run('My name is Ada.', { thread });
      // The secrets were really in use: the services received them.
      const sent = ctx.emulator.requests.map((r) => JSON.stringify(r.headers)).join('\n');
      if (provider.id.startsWith('openai') || provider.id === 'a2a') expect(sent).to.include(SECRETS.apiKey);
      if (provider.id === 'azure-ai-agents') expect(sent).to.include(SECRETS.azureToken);
      expectClean(await snapshot(thread), 'the serialized thread');

      const errors: unknown[] = [];
      ctx.emulator.injectFault({ kind: 'status', status: 500, times: 1, ...ctx.harness.modelCall(thread) });
      errors.push(await rejection(agent.run('My name is Bob.', { thread })));
      ctx.emulator.injectFault({ kind: 'status', status: 401, times: 1, message: 'Incorrect API key provided.', ...ctx.harness.modelCall(thread) });
      errors.push(await rejection(agent.run('My name is Bob.', { thread })));
      ctx.emulator.injectFault({ kind: 'cut-stream', afterEvents: 2, ...ctx.harness.modelCall(thread) });
      errors.push(await rejection(new Promise((resolve, reject) => agent.runStream('My name is Bob.', { thread }).subscribe({ error: reject, complete: () => resolve(undefined) }))));
      for (const [i, error] of errors.entries()) expectClean(errorText(error), `error ${i}`);
      expectClean(await snapshot(thread), 'the serialized thread after failures');
      expectClean(logged.join('\n'), 'console output');
    });
  }

  it('a configuration error about a plugin configured with secrets (a connection URL password, an API key) does not echo them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skein-secrets-'));
    try {
      const file = join(dir, 'skein.yaml');
      await writeFile(
        file,
        [
          'plugins:',
          '  openai:',
          '    apiKey: ${SKEIN_TEST_OPENAI_KEY}',
          '    maxRetries: "not a number"',
          '  postgres:',
          '    connectionString: ${SKEIN_TEST_PG_URL}',
          'agents:',
          '  support:',
          '    client: openai-chat',
          '    model: gpt-test',
          '',
        ].join('\n'),
      );
      process.env.SKEIN_TEST_OPENAI_KEY = SECRETS.apiKey;
      process.env.SKEIN_TEST_PG_URL = `postgres://skein:${PG_PASSWORD}@127.0.0.1:5432/test`;
      const error = await rejection(createContainer(file));
      expect(error).to.be.instanceOf(ConfigurationError);
      expectClean(errorText(error), 'the configuration error');
      expectClean(logged.join('\n'), 'console output');
    } finally {
      delete process.env.SKEIN_TEST_OPENAI_KEY;
      delete process.env.SKEIN_TEST_PG_URL;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
