/**
 * The JSON text of a serialized thread, when it is already known: in-process plumbing between
 * the executor and the in-memory context store, so a turn parses its stored thread once and
 * stringifies the new one once (not three times each). Keyed weakly by the object the text is
 * of; an object is never changed after its text is recorded. Not part of the public API.
 */
const texts = new WeakMap<object, string>();

/** Records `json` as the JSON text of `value` (a SerializedThread, or a loaded context's thread holder). */
export function rememberThreadJson(value: object, json: string): void {
  texts.set(value, json);
}

/** The JSON text recorded for `value`, if any. */
export function threadJsonOf(value: object): string | undefined {
  return texts.get(value);
}
