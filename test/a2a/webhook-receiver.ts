import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type Notification = { statusUpdate?: { status?: { state?: string; message?: { metadata?: Record<string, unknown> } } }; task?: { status?: { state?: string } } };

/**
 * A webhook receiver; `completed` resolves when a notification says the task completed,
 * `reached(state)` when one says it reached `state` (e.g. 'TASK_STATE_FAILED').
 */
export async function startWebhook() {
  const received: { token: string | undefined; body: Notification }[] = [];
  const waiting: { state: string; resolve: (body: Notification) => void }[] = [];
  const reached = (state: string) =>
    new Promise<Notification>((resolve) => {
      const seen = received.find((r) => stateOf(r.body) === state);
      if (seen) resolve(seen.body);
      else waiting.push({ state, resolve });
    });
  const completed = reached('TASK_STATE_COMPLETED').then(() => {});
  const app = express();
  app.post('/hook', express.json({ type: () => true }), (req, res) => {
    const body = req.body as Notification;
    received.push({ token: req.headers['x-a2a-notification-token'] as string | undefined, body });
    for (const w of waiting.filter((w) => w.state === stateOf(body))) w.resolve(body);
    res.sendStatus(200);
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, completed, reached, close: () => new Promise<void>((r) => server.close(() => r())) };
}

function stateOf(body: Notification): string | undefined {
  return body?.statusUpdate?.status?.state ?? body?.task?.status?.state;
}
