/** One event of a `text/event-stream` body: its `event:` field (if any) and its `data:` lines joined by `\n`. */
export interface ServerSentEvent {
  event: string | undefined;
  data: string;
}

/**
 * Parses a `text/event-stream` body as it arrives, per the WHATWG HTML "event stream
 * interpretation": lines end with CRLF, LF or CR (a CR at the end of one piece and an LF at the
 * start of the next are one line end); `:` starts a comment; one space after the field's colon
 * is dropped; `data:` lines join with `\n`; a blank line dispatches, an event with no data is
 * dropped, and an event not closed by a blank line when the body ends is dropped.
 * `id:` and `retry:` are read past: nothing here reconnects.
 */
export class ServerSentEventParser {
  readonly #decoder = new TextDecoder();
  /** The start of a line whose end has not arrived yet. */
  #rest = '';
  /** The last piece ended with CR: an LF opening the next piece belongs to that line end. */
  #afterCR = false;
  #event: string | undefined = undefined;
  #data: string | undefined = undefined;

  /** Feeds the next piece of the body; `onEvent` gets every event it completes, in order. */
  push(bytes: Uint8Array, onEvent: (event: ServerSentEvent) => void): void {
    this.pushText(this.#decoder.decode(bytes, { stream: true }), onEvent);
  }

  pushText(piece: string, onEvent: (event: ServerSentEvent) => void): void {
    let start = 0;
    // An empty piece (a split UTF-8 character) says nothing about what follows a CR.
    if (piece === '') return;
    // After a CR the rest is empty: the CR ended the last line of that piece.
    if (this.#afterCR) {
      this.#afterCR = false;
      if (piece.charCodeAt(0) === 10) start = 1;
    }
    const text = this.#rest === '' ? piece : this.#rest + piece;
    // Most services end lines with LF alone: then one indexOf per line finds every end.
    const crFree = text.indexOf('\r', start) === -1;
    // Where the next LF and CR are; found again only once passed, so a piece is scanned once.
    let lf = -1;
    let cr = -1;
    for (;;) {
      let end: number;
      let next: number;
      if (crFree) {
        end = text.indexOf('\n', start);
        if (end === -1) break;
        next = end + 1;
      } else {
        if (lf < start) lf = indexOrInfinity(text, '\n', start);
        if (cr < start) cr = indexOrInfinity(text, '\r', start);
        if (lf === Infinity && cr === Infinity) break;
        end = Math.min(lf, cr);
        next = end + 1;
        if (end === cr) {
          if (next === text.length) this.#afterCR = true;
          else if (text.charCodeAt(next) === 10) next++;
        }
      }
      this.#line(text, start, end, onEvent);
      start = next;
    }
    this.#rest = start === 0 ? text : text.slice(start);
  }

  /** The body ended: flushes the decoder; an event without its closing blank line is dropped. */
  end(): void {
    this.#decoder.decode();
    this.#rest = '';
    this.#event = undefined;
    this.#data = undefined;
  }

  #line(text: string, start: number, end: number, onEvent: (event: ServerSentEvent) => void): void {
    if (start === end) {
      const data = this.#data;
      const event = this.#event;
      this.#data = undefined;
      this.#event = undefined;
      if (data !== undefined) onEvent({ event, data });
      return;
    }
    if (text.charCodeAt(start) === 58) return; // ':' a comment
    const colon = text.indexOf(':', start);
    const nameEnd = colon === -1 || colon > end ? end : colon;
    let valueStart = nameEnd === end ? end : nameEnd + 1;
    if (valueStart < end && text.charCodeAt(valueStart) === 32) valueStart++;
    const name = text.slice(start, nameEnd);
    if (name === 'data') {
      const value = text.slice(valueStart, end);
      this.#data = this.#data === undefined ? value : `${this.#data}\n${value}`;
    } else if (name === 'event') {
      this.#event = text.slice(valueStart, end);
    }
  }
}

/** The index of `char` in `text` from `from`; Infinity when there is none (so Math.min picks the other). */
function indexOrInfinity(text: string, char: string, from: number): number {
  const at = text.indexOf(char, from);
  return at === -1 ? Infinity : at;
}
