/**
 * Keeping connection passwords out of messages, causes and serialized state: one set of helpers
 * for every store and plugin that holds a URL with credentials.
 */

/** The URL with its password replaced by `***` (or `unparseable` when it is not a URL). */
export function redactUrl(url: string, unparseable = '(unparseable URL)'): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return unparseable;
  }
}

function passwordsOf(url: string): string[] {
  try {
    const password = new URL(url).password;
    return password ? [password, decodeURIComponent(password)] : [];
  } catch {
    return [];
  }
}

/** `text` with the URL's password (raw and URL-decoded) replaced by `***`. */
export function scrubSecrets(text: string, url: string): string {
  let out = text;
  for (const p of passwordsOf(url)) if (p) out = out.split(p).join('***');
  return out;
}

/**
 * A copy of a driver error that is safe to keep as `cause`: message, name, stack and the plain
 * fields (code, detail, ...) with the password removed; object fields are dropped, since a
 * driver may attach the failed command with its arguments (ioredis: AUTH's password).
 */
export function scrubbedCause(error: unknown, url: string): unknown {
  if (!(error instanceof Error)) return typeof error === 'string' ? scrubSecrets(error, url) : undefined;
  const copy = new Error(scrubSecrets(error.message, url));
  copy.name = error.name;
  copy.stack = scrubSecrets(error.stack ?? '', url);
  const fields = copy as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string') fields[key] = scrubSecrets(value, url);
    else if (typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  }
  return copy;
}
