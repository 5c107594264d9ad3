/**
 * One contender of `npm run bench:ag-ui`, in its own process (forked with IPC by ag-ui-bench.js):
 * `ag-ui` serves the bench agent with AgUiServer (the parent drives it with @ag-ui/client's
 * HttpAgent); `direct` runs the same turns with `agent.runStream` in this process when asked;
 * `bare-http` is the least an AG-UI server over the same agent does (the reference for what
 * HTTP and SSE cost): node's http server, JSON.parse of the body, the thread of its threadId from
 * a Map, the last message as input, `runStream`, its text as AG-UI text events through
 * @ag-ui/encoder, one write per event. No schema check, no stored record, no reconciliation.
 * All answer `cpu` with this process's CPU time.
 */
import { EventEncoder } from '@ag-ui/encoder';
import { Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastValueFrom } from 'rxjs';
import type { AgentThread } from 'skein';
import { AgUiServer } from 'skein/ag-ui';
import { skeinAgent, userText } from '../turns-bench.js';

export type AgUiContenderName = 'ag-ui' | 'direct' | 'bare-http';

const [name, modelBaseURL] = process.argv.slice(2);
if ((name !== 'ag-ui' && name !== 'direct' && name !== 'bare-http') || !modelBaseURL || !process.send) {
  throw new Error(`ag-ui-bench-server.js: expected ag-ui|direct|bare-http and the model base URL, forked with IPC; found ${process.argv.slice(2).join(' ')}`);
}
if (process.env.AG_UI_BENCH_COUNT) {
  // Under callgrind a turn takes a second or more: a client's next request can wait in the socket
  // past the 5 s keep-alive timeout, and the server would close the socket under it (ECONNRESET).
  const listen = Server.prototype.listen;
  Server.prototype.listen = function (this: Server, ...args: unknown[]) {
    this.keepAliveTimeout = 10 * 60_000;
    return listen.apply(this, args as Parameters<typeof listen>);
  } as typeof listen;
}
const agent = skeinAgent(modelBaseURL);
let url = '';
if (name === 'ag-ui') {
  const server = new AgUiServer({ agent, logger: { warn: () => undefined, error: (message, error) => console.error(message, error) } });
  url = await server.listen();
} else if (name === 'bare-http') {
  url = await bareHttpServer();
}

async function bareHttpServer(): Promise<string> {
  const threads = new Map<string, AgentThread>();
  const encoder = new EventEncoder();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { threadId: string; runId: string; messages: { content: string }[] };
      let thread = threads.get(input.threadId);
      if (!thread) threads.set(input.threadId, (thread = agent.getNewThread()));
      res.writeHead(200, { 'content-type': encoder.getContentType(), 'cache-control': 'no-cache', connection: 'keep-alive' });
      const send = (event: object) => res.write(encoder.encodeSSE(event as Parameters<EventEncoder['encodeSSE']>[0]));
      const messageId = `${input.runId}-reply`;
      send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
      send({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' });
      agent.runStream(input.messages[input.messages.length - 1]!.content, { thread }).subscribe({
        next: (update) => {
          if (update.text) send({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: update.text });
        },
        error: (error: unknown) => res.end(encoder.encodeSSE({ type: 'RUN_ERROR', message: String(error) } as Parameters<EventEncoder['encodeSSE']>[0])),
        complete: () => {
          send({ type: 'TEXT_MESSAGE_END', messageId });
          res.end(encoder.encodeSSE({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId } as Parameters<EventEncoder['encodeSSE']>[0]));
        },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** `conversations` new threads in parallel, `turns` streamed turns each. */
async function runDirect(conversations: number, turns: number): Promise<void> {
  await Promise.all(
    Array.from({ length: conversations }, async () => {
      const thread = agent.getNewThread();
      for (let t = 0; t < turns; t++) await lastValueFrom(agent.runStream(userText(t), { thread }), { defaultValue: undefined });
    }),
  );
}

process.on('message', (message: { cpu?: true; run?: { conversations: number; turns: number } }) => {
  if (message.cpu) {
    const { user, system } = process.cpuUsage();
    process.send!({ cpuUs: user + system });
  } else if (message.run) {
    void runDirect(message.run.conversations, message.run.turns).then(() => process.send!({ done: true }));
  }
});
// The parent's exit closes the IPC channel; do not outlive it.
process.on('disconnect', () => process.exit(0));
process.send({ url });
