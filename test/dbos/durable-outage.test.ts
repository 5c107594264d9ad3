import { expect } from 'chai';
import { join } from 'node:path';
import { ChatAgent, type ChatMessage, type DurableRunResult, type DurableRunUpdate } from 'skein';
import { SqliteChatMessageStoreFactory } from 'skein/store-sqlite';
import { tempDir } from '../stores/services.js';
import { DATABASE_URL, NEEDS_POSTGRES, RUN_ID, countLines, dropSchema, postgresAvailable, readJson, runWorker, withService } from './dbos-support.js';
import { ScriptedClient } from './fixtures/scripted-client.js';
import { TcpProxy } from './tcp-proxy.js';

const DBOS_SCHEMA = `dbos_${RUN_ID}_outage`;

/** Resolves once `done()` holds, checking every 50 ms; rejects when `failed()` names a reason first. */
async function until(done: () => boolean, failed: () => string | undefined): Promise<void> {
  while (!done()) {
    const reason = failed();
    if (reason) throw new Error(reason);
    await new Promise((r) => setTimeout(r, 50));
  }
}

withService('durable runs on DBOS: PostgreSQL outage', await postgresAvailable(), NEEDS_POSTGRES, () =>
  describe('the system database cut in the middle of a run (TCP proxy)', function () {
    this.timeout(90_000);
    const dir = tempDir();
    let proxy: TcpProxy | undefined;

    after(async () => {
      await proxy?.close();
      await dropSchema(DBOS_SCHEMA);
      dir.remove();
    });

    it('the caller and a stream reader get DurableEngineUnavailableError; when PostgreSQL is back the run finishes, every tool ran once, the thread holds the turn once and the reader reads on without a gap or repeat', async () => {
      const target = new URL(DATABASE_URL);
      proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
      const systemUrl = new URL(DATABASE_URL);
      systemUrl.hostname = '127.0.0.1';
      systemUrl.port = String(proxy.port);
      const path = join(dir.path, 'threads.db');
      const countFile = join(dir.path, 'outage.count');
      const resultFile = join(dir.path, 'outage.json');
      let exited: string | undefined;
      const worker = runWorker({
        DBOS_SCHEMA,
        SYSTEM_DATABASE_URL: systemUrl.toString(),
        OUTAGE_MS: '1000',
        STORE: 'sqlite',
        STORE_ARG: path,
        COUNT_FILE: countFile,
        RESULT_FILE: resultFile,
        RUN_ID: `outage-${RUN_ID}`,
        TOOL_DELAY_MS: '500',
        STREAM_FILE: join(dir.path, 'outage.stream.json'),
        ACTION: 'start,stream-through-outage,result-through-outage',
      }).then((exit) => ((exited = `the worker exited (${exit.code ?? exit.signal}) ${exit.stderr}`), exit));
      // Cut while the first tool runs: the model call before it is recorded, the tool's result not yet.
      await until(() => countLines(countFile, 'start fetch_page') > 0, () => exited);
      await proxy.close();
      await until(() => countLines(countFile, 'unavailable ') > 0 && countLines(countFile, 'stream-unavailable ') > 0, () => exited);
      await proxy.open();
      const exit = await worker;
      expect(exit.code, exit.stderr).to.equal(0);
      expect(readJson<{ error?: unknown }>(resultFile).error).to.equal(undefined);
      const result = readJson<DurableRunResult>(resultFile);
      expect(result.text).to.equal('done ("fetch_page 1 ok"; "summarize 2 ok")');
      expect(countLines(countFile, `unavailable DurableEngineUnavailableError outage-${RUN_ID}`)).to.be.greaterThan(0);
      // The reader's error named the offset to read on after; reading on, it got every entry once.
      expect(countLines(countFile, `stream-unavailable DurableEngineUnavailableError outage-${RUN_ID} true`)).to.be.greaterThan(0);
      const streamed = readJson<DurableRunUpdate[]>(join(dir.path, 'outage.stream.json'));
      expect(streamed.map((u) => u.offset)).to.deep.equal(streamed.map((_, i) => i));
      expect(streamed.filter((u) => u.modelCall?.id === '0.2').map((u) => u.text).join('')).to.equal(result.text);
      expect(streamed.filter((u) => u.role === 'tool')).to.have.length(2);
      expect(countLines(countFile, 'done fetch_page'), 'fetch_page completed').to.equal(1);
      expect(countLines(countFile, 'done summarize'), 'summarize completed').to.equal(1);
      const factory = new SqliteChatMessageStoreFactory({ path });
      try {
        const agent = new ChatAgent({ name: 'worker', chatClient: new ScriptedClient(), chatMessageStoreFactory: factory });
        const messages: ChatMessage[] = await agent.getMessages(await agent.deserializeThread(result.thread));
        expect(messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
      } finally {
        factory.close();
      }
    });
  }),
);
