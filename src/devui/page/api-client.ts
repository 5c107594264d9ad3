import type { ErrorBody } from '../devui-api-types.js';
import { $ } from './dom.js';

const errorBox = $('error');
const errorText = $('error-text');

export class ApiError extends Error {
  constructor(readonly body: ErrorBody) {
    super(body.message);
  }
}

export async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(path, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  const body = (await response.json().catch(() => ({}))) as { error?: ErrorBody };
  if (!response.ok) throw new ApiError(body.error ?? { name: 'Error', message: `HTTP ${response.status} from ${path}` });
  return body as T;
}

export function showError(error: unknown): void {
  const body: ErrorBody = error instanceof ApiError ? error.body : { name: 'Error', message: error instanceof Error ? error.message : String(error) };
  errorText.textContent = `${body.name}${body.status !== undefined ? ` (HTTP ${body.status})` : ''}: ${body.message}`;
  errorBox.hidden = false;
}

export function clearError(): void {
  errorBox.hidden = true;
  errorText.textContent = '';
}

/** Reads server-sent events from a fetch response. */
export async function* readEvents(response: Response): AsyncGenerator<{ event: string; data: unknown; id?: string }> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let data = '';
      let id: string | undefined;
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
        else if (line.startsWith('id: ')) id = line.slice(4);
      }
      yield { event, data: data ? JSON.parse(data) : undefined, ...(id !== undefined ? { id } : {}) };
    }
  }
}
