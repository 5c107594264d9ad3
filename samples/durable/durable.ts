// A durable run killed and resumed, in one command: `npm run build && node dist/samples/durable/durable.js`
// (PostgreSQL at DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test).
// The parent starts a child that runs a long tool loop and kills itself (SIGKILL) in the middle;
// a second child recovers the run and finishes it without repeating a finished tool; a third
// run asks for approval, waits with no process alive, and is approved from another process.
import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ChatAgent, type ChatMessage, type ChatResponse, tool } from 'skein';
import { DbosDurableRunner } from 'skein/dbos';
import { from, mergeMap } from 'rxjs';
import { z } from 'zod';

const URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = process.env.SAMPLE_SCHEMA ?? 'skein_durable_sample';
const role = process.argv[2];

/** A stand-in model: researches pages 1..5 one by one, then answers; "deploy" asks to deploy. */
const model = {
  providerId: 'sample-model',
  threadKind: 'message-store' as const,
  async getResponse(messages: readonly ChatMessage[]): Promise<ChatResponse> {
    const results = messages.flatMap((m) => m.contents).filter((c) => c.kind === 'function-result').length;
    const wantsDeploy = messages.some((m) => m.contents.some((c) => c.kind === 'text' && c.text.includes('deploy')));
    const call = (name: string, page: number) => ({ messages: [{ role: 'assistant' as const, contents: [{ kind: 'function-call' as const, callId: `c${page}`, name, arguments: JSON.stringify({ page }) }] }] });
    if (wantsDeploy) return results === 0 ? call('deploy', 0) : { messages: [{ role: 'assistant', contents: [{ kind: 'text', text: 'Deployed.' }] }] };
    if (results < 5) return call('read_page', results + 1);
    return { messages: [{ role: 'assistant', contents: [{ kind: 'text', text: `Read ${results} pages.` }] }] };
  },
  // Durable runs call the model streaming (their stream carries its deltas): one update per message here.
  getStreamingResponse(messages: readonly ChatMessage[]) {
    return from(model.getResponse(messages)).pipe(mergeMap((response) => response.messages.map((m) => ({ role: m.role, contents: m.contents }))));
  },
};

const readPage = tool({
  name: 'read_page',
  parameters: z.object({ page: z.number() }),
  execute: async ({ page }, { idempotencyKey }) => {
    console.log(`  [${role}] reading page ${page} (idempotency key ${idempotencyKey})`);
    if (role === 'crash' && page === 3) {
      console.log(`  [${role}] SIGKILL while reading page 3`);
      process.kill(process.pid, 'SIGKILL');
    }
    return `page ${page} text`;
  },
});
const deploy = tool({ name: 'deploy', parameters: z.object({}), requiresApproval: true, execute: () => (console.log(`  [${role}] deploying`), 'ok') });

async function child(): Promise<void> {
  const agent = new ChatAgent({ name: 'researcher', chatClient: model, tools: [readPage, deploy] });
  const runner = new DbosDurableRunner({ systemDatabaseUrl: URL, schema: SCHEMA });
  const durable = runner.durable(agent);
  await runner.launch(); // recovers the runs a killed process left
  const runId = process.argv[3]!;
  if (role === 'crash') await durable.start('research five pages', { runId });
  if (role === 'ask') {
    await durable.start('please deploy', { runId });
    while (!(await runner.getWaiting(runId))) await new Promise((r) => setTimeout(r, 100));
    console.log(`  [${role}] waiting for approval; this process exits now`);
  }
  if (role === 'approve') {
    const waiting = await runner.getWaiting(runId);
    await runner.approve(runId, waiting!.approvalRequests[0]!.callId, true);
    console.log(`  [${role}] approved`);
  }
  if (role === 'crash' || role === 'resume' || role === 'approve') console.log(`  [${role}] result: ${(await runner.getRun(runId)).text}`);
  await runner.shutdown();
  process.exit(0);
}

if (role) await child();
else {
  const self = fileURLToPath(import.meta.url);
  const run = (...args: string[]) => spawnSync(process.execPath, [self, ...args], { stdio: ['ignore', 'inherit', 'ignore'] });
  const id = `sample-${Date.now()}`;
  console.log('1. a long tool loop, killed in the middle:');
  run('crash', `${id}-loop`);
  console.log('2. a new process recovers it (pages 1 and 2 are not read again):');
  run('resume', `${id}-loop`);
  console.log('3. a run that needs approval, left waiting:');
  run('ask', `${id}-approval`);
  console.log('4. another process approves; the run finishes:');
  run('approve', `${id}-approval`);
}
