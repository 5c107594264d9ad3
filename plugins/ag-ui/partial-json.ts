/**
 * The value a truncated JSON text (a tool call's arguments as they stream) holds so far: an open
 * string is closed where it stops, open objects and arrays are closed, and a member or element
 * that is not whole yet (a key without its value, `tru`, a dangling `,`) is left out.
 * `undefined` when not even the opening of a value is there.
 *
 * @example
 * parsePartialJson('{"document":"Once upon a ti') // { document: 'Once upon a ti' }
 * parsePartialJson('{"a":1,"b":tr')                // { a: 1 }
 */
export function parsePartialJson(text: string): unknown {
  const whole = tryParse(text);
  if (whole.ok) return whole.value;
  // Scan once: where each safe cut point is, and which brackets are open there.
  const cuts: { at: number; closers: string }[] = [];
  const stack: string[] = [];
  let inString = false;
  let escaped = false;
  let stringStart = -1;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') {
      inString = true;
      stringStart = i;
    } else if (ch === '{' || ch === '[') {
      stack.push(ch === '{' ? '}' : ']');
      cuts.push({ at: i + 1, closers: closing(stack) });
    } else if (ch === '}' || ch === ']') {
      stack.pop();
      cuts.push({ at: i + 1, closers: closing(stack) });
    } else if (ch === ',') {
      cuts.push({ at: i, closers: closing(stack) });
    }
  }
  const candidates: string[] = [];
  if (inString) {
    // The open string closed where it stops (without a half-written escape).
    const open = text.slice(stringStart);
    const body = escaped ? open.slice(0, -1) : open.replace(/\\u[0-9a-fA-F]{0,3}$/, '');
    candidates.push(`${text.slice(0, stringStart)}${body}"${closing(stack)}`);
  } else {
    candidates.push(text + closing(stack));
  }
  for (let c = cuts.length - 1; c >= 0; c--) candidates.push(text.slice(0, cuts[c]!.at) + cuts[c]!.closers);
  for (const candidate of candidates) {
    const parsed = tryParse(candidate);
    if (parsed.ok) return parsed.value;
  }
  return undefined;
}

function closing(stack: readonly string[]): string {
  return [...stack].reverse().join('');
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
