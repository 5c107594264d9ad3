import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A webhook receiver; resolves `completed` when a notification says the task completed. */
export async function startWebhook() {
  const received: { token: string | undefined; body: { statusUpdate?: { status?: { state?: string } }; task?: { status?: { state?: string } } } }[] = [];
  let done!: () => void;
  const completed = new Promise<void>((resolve) => (done = resolve));
  const app = express();
  app.post('/hook', express.json({ type: () => true }), (req, res) => {
    received.push({ token: req.headers['x-a2a-notification-token'] as string | undefined, body: req.body });
    const state = req.body?.statusUpdate?.status?.state ?? req.body?.task?.status?.state;
    if (state === 'TASK_STATE_COMPLETED') done();
    res.sendStatus(200);
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, completed, close: () => new Promise<void>((r) => server.close(() => r())) };
}
