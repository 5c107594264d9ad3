/**
 * The JSON text of a serialized thread, when it is already known: in-process plumbing between
 * the executor and the in-memory context store, so a turn parses its stored thread once and
 * stringifies the new one once (not three times each). Keyed weakly by the thread object the
 * text is of. Not part of the public API.
 */
const loaded = new WeakMap<object, string>();
const saving = new WeakMap<object, string>();

/** Records the text a loaded thread was parsed from, for "did the turn change it?" (never for a save: callers may change it). */
export function rememberLoadedJson(thread: object, json: string): void {
  loaded.set(thread, json);
}

export function loadedJsonOf(thread: object): string | undefined {
  return loaded.get(thread);
}

/** Records the text of a thread the executor made and saves right away, so the store need not stringify it again. */
export function rememberSavingJson(thread: object, json: string): void {
  saving.set(thread, json);
}

export function savingJsonOf(thread: object): string | undefined {
  return saving.get(thread);
}
