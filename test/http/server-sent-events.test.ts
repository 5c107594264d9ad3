import { expect } from 'chai';
import { ServerSentEventParser, type ServerSentEvent } from 'skein';

/** Every event the parser gives for `body` fed in `pieces` (byte offsets where one piece ends and the next begins). */
function parse(body: string | Uint8Array, cuts: readonly number[] = []): ServerSentEvent[] {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const parser = new ServerSentEventParser();
  const events: ServerSentEvent[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    parser.push(bytes.subarray(from, cut), (event) => events.push(event));
    from = cut;
  }
  parser.end();
  return events;
}

/** The same body cut at every byte: one piece per byte boundary, the harshest network. */
function everyByte(body: string): number[] {
  return Array.from({ length: new TextEncoder().encode(body).length - 1 }, (_, i) => i + 1);
}

describe('ServerSentEventParser (text/event-stream, WHATWG event stream interpretation)', () => {
  const chat = 'data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n';

  it('reads data events separated by blank lines', () => {
    expect(parse(chat)).to.deep.equal([
      { event: undefined, data: '{"n":1}' },
      { event: undefined, data: '{"n":2}' },
      { event: undefined, data: '[DONE]' },
    ]);
  });

  it('gives the same events whatever the pieces, down to one byte each', () => {
    const whole = parse(chat);
    expect(parse(chat, everyByte(chat))).to.deep.equal(whole);
    expect(parse(chat, [3, 14, 15, 16, 30])).to.deep.equal(whole);
  });

  it('accepts CRLF, CR and LF line ends, mixed, also when a CRLF is split between two pieces', () => {
    const expected = [
      { event: 'response.created', data: '{"a":1}' },
      { event: undefined, data: '{"b":2}' },
      { event: undefined, data: '{"c":3}' },
    ];
    const crlf = 'event: response.created\r\ndata: {"a":1}\r\n\r\ndata: {"b":2}\r\n\r\ndata: {"c":3}\r\n\r\n';
    const cr = 'event: response.created\rdata: {"a":1}\r\rdata: {"b":2}\r\rdata: {"c":3}\r\r';
    const mixed = 'event: response.created\r\ndata: {"a":1}\n\rdata: {"b":2}\r\n\ndata: {"c":3}\r\r';
    for (const body of [crlf, cr, mixed]) {
      expect(parse(body), JSON.stringify(body)).to.deep.equal(expected);
      expect(parse(body, everyByte(body)), JSON.stringify(body)).to.deep.equal(expected);
    }
    // Cut right between CR and LF: one line end, not an empty line that would dispatch early.
    const at = crlf.indexOf('\r\n') + 1;
    expect(parse(crlf, [at])).to.deep.equal(expected);
  });

  it('an empty piece between a CR and its LF (a UTF-8 character split there) does not split the line end', () => {
    const bytes = (text: string) => new TextEncoder().encode(text);
    const parser = new ServerSentEventParser();
    const seen: ServerSentEvent[] = [];
    parser.push(bytes('data: x\r'), (e) => seen.push(e));
    parser.push(new Uint8Array([0xc3]), (e) => seen.push(e)); // half of "é": decodes to ''
    parser.push(new Uint8Array([0xa9]), (e) => seen.push(e)); // the other half: "é"
    parser.push(bytes('\n\n'), (e) => seen.push(e));
    parser.pushText('data: y\r', (e) => seen.push(e));
    parser.pushText('', (e) => seen.push(e));
    parser.pushText('\ndata: z\n\n', (e) => seen.push(e));
    // "é" after the CR is a line of its own (a field named "é", read past); the LF after the
    // empty piece belongs to the CR before it, so y and z are one event.
    expect(seen).to.deep.equal([
      { event: undefined, data: 'x' },
      { event: undefined, data: 'y\nz' },
    ]);
  });

  it('reads a long CR-only body in one piece', () => {
    const body = Array.from({ length: 2000 }, (_, i) => `data: ${i}\r\r`).join('');
    const events = parse(body);
    expect(events).to.have.length(2000);
    expect(events[1999]).to.deep.equal({ event: undefined, data: '1999' });
  });

  it('joins data lines with \\n, drops one space after the colon, keeps a value without one', () => {
    expect(parse('data: first\ndata:second\ndata:  two spaces\n\n')).to.deep.equal([{ event: undefined, data: 'first\nsecond\n two spaces' }]);
    expect(parse('data\n\n')).to.deep.equal([{ event: undefined, data: '' }]);
    expect(parse('data:\ndata:\n\n')).to.deep.equal([{ event: undefined, data: '\n' }]);
  });

  it('skips comments, id and retry fields and unknown fields; an event with no data is not dispatched', () => {
    const body = ': keep-alive\n\nid: 7\nretry: 100\nfoo: bar\ndata: x\n\nevent: ping\n\n: another comment\ndata: y\n\n';
    expect(parse(body)).to.deep.equal([
      { event: undefined, data: 'x' },
      { event: undefined, data: 'y' },
    ]);
  });

  it('resets the event name after each dispatch', () => {
    expect(parse('event: a\ndata: 1\n\ndata: 2\n\n')).to.deep.equal([
      { event: 'a', data: '1' },
      { event: undefined, data: '2' },
    ]);
  });

  it('decodes UTF-8 split anywhere, and drops a leading byte-order mark', () => {
    const body = '\uFEFFdata: {"text":"héllo 🌍 — ok"}\n\n';
    const expected = [{ event: undefined, data: '{"text":"héllo 🌍 — ok"}' }];
    expect(parse(body)).to.deep.equal(expected);
    expect(parse(body, everyByte(body))).to.deep.equal(expected);
  });

  it('drops an event the body ends in the middle of (no closing blank line)', () => {
    expect(parse('data: whole\n\ndata: cut short\n')).to.deep.equal([{ event: undefined, data: 'whole' }]);
    expect(parse('data: whole\n\ndata: cut sho')).to.deep.equal([{ event: undefined, data: 'whole' }]);
  });

  it('reads a long data line that arrives in many pieces', () => {
    const long = 'x'.repeat(100_000);
    const body = `data: ${long}\n\n`;
    const cuts = Array.from({ length: 99 }, (_, i) => (i + 1) * 1000);
    expect(parse(body, cuts)).to.deep.equal([{ event: undefined, data: long }]);
  });

  it('starts clean after end(): nothing of a half event is carried into the next body', () => {
    const parser = new ServerSentEventParser();
    const seen: ServerSentEvent[] = [];
    parser.pushText('event: left\ndata: half\ndata: line without its end', (e) => seen.push(e));
    parser.end();
    parser.pushText('data: next\n\n', (e) => seen.push(e));
    expect(seen).to.deep.equal([{ event: undefined, data: 'next' }]);
  });
});
