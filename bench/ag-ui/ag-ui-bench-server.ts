/**
 * One contender of `npm run bench:ag-ui`, in its own process (forked with IPC by ag-ui-bench.js):
 * `ag-ui` serves the bench agent with AgUiServer (the parent drives it with @ag-ui/client's
 * HttpAgent); `direct` runs the same turns with `agent.runStream` in this process when asked.
 * Both answer `cpu` with this process's CPU time.
 */
import { lastValueFrom } from 'rxjs';
import { AgUiServer } from 'skein/ag-ui';
import { skeinAgent, userText } from '../turns-bench.js';

export type AgUiContenderName = 'ag-ui' | 'direct';

const [name, modelBaseURL] = process.argv.slice(2);
if ((name !== 'ag-ui' && name !== 'direct') || !modelBaseURL || !process.send) {
  throw new Error(`ag-ui-bench-server.js: expected ag-ui|direct and the model base URL, forked with IPC; found ${process.argv.slice(2).join(' ')}`);
}
const agent = skeinAgent(modelBaseURL);
let url = '';
if (name === 'ag-ui') {
  const server = new AgUiServer({ agent, logger: { warn: () => undefined, error: (message, error) => console.error(message, error) } });
  url = await server.listen();
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
