import type { LoadOutcome, ThreadSummary } from '../devui-api-types.js';
import { api, ApiError, clearError, showError } from './api-client.js';
import { $, agentSelect } from './dom.js';
import { loadThreads, openThread } from './thread-list.js';

const upload = $<HTMLInputElement>('upload');
const loadNote = $('load-note');
const loadNoteText = $('load-note-text');
const loadCopy = $<HTMLButtonElement>('load-copy');

/** The file last loaded, kept so "Load as a copy" can send it again. */
let lastLoaded: { agent: string; serialized: unknown } | undefined;

async function importFile(file: File): Promise<void> {
  clearError();
  let serialized: unknown;
  try {
    serialized = JSON.parse(await file.text());
  } catch (error) {
    throw new ApiError({ name: 'SerializationError', message: `${file.name} is not JSON: ${(error as Error).message}` });
  }
  await load({ agent: agentSelect.value, serialized });
}

/**
 * Loads a thread file. A file whose history is already listed opens that entry (the server
 * never adds a second entry on one history) and offers a real copy instead.
 */
async function load(file: { agent: string; serialized: unknown }, asCopy = false): Promise<void> {
  const { thread, loaded, message } = await api<{ thread: ThreadSummary; loaded: LoadOutcome; message: string }>('/api/threads/import', {
    method: 'POST',
    body: JSON.stringify({ ...file, ...(asCopy ? { as: 'copy' } : {}) }),
  });
  await loadThreads();
  await openThread(thread.id);
  lastLoaded = loaded === 'existing' ? file : undefined;
  loadNote.dataset.outcome = loaded;
  loadNoteText.textContent = message;
  loadCopy.hidden = loaded !== 'existing';
  loadNote.hidden = loaded === 'new';
}

$('load-json').addEventListener('click', () => upload.click());
loadCopy.addEventListener('click', () => {
  if (lastLoaded) void load(lastLoaded, true).catch(showError);
});
upload.addEventListener('change', () => {
  const file = upload.files?.[0];
  upload.value = '';
  if (file) void importFile(file).catch(showError);
});
