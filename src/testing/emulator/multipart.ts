import type { RouteRequest } from './router.js';

/** One part of a multipart body: a plain field or an uploaded file. */
export type MultipartValue = string | { filename: string; contentType: string; bytes: Buffer };

export type MultipartResult =
  | { ok: true; fields: Map<string, MultipartValue> }
  | { ok: false; reason: string };

/**
 * Parses a `multipart/form-data` request body (what the SDKs send for uploads). Node's own
 * fetch `Request` does the parsing, so boundaries, quoting and binary parts follow the spec.
 * The first value of a repeated field wins.
 */
export async function readMultipart(request: RouteRequest): Promise<MultipartResult> {
  const contentType = request.headers['content-type'] ?? '';
  if (!contentType.toLowerCase().startsWith('multipart/form-data')) {
    return { ok: false, reason: `expected a multipart/form-data body, got ${contentType ? `"${contentType}"` : 'no content type'}` };
  }
  let form: FormData;
  try {
    form = await new Request('http://emulator.invalid/', {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: Uint8Array.from(request.rawBody ?? []),
    }).formData();
  } catch (error) {
    return { ok: false, reason: `the multipart body could not be parsed (${error instanceof Error ? error.message : String(error)})` };
  }
  const entries: [string, FormDataEntryValue][] = [];
  form.forEach((value, name) => entries.push([name, value]));
  const fields = new Map<string, MultipartValue>();
  for (const [name, value] of entries) {
    if (fields.has(name)) continue;
    if (typeof value === 'string') {
      fields.set(name, value);
    } else {
      fields.set(name, { filename: value.name, contentType: value.type, bytes: Buffer.from(await value.arrayBuffer()) });
    }
  }
  return { ok: true, fields };
}
