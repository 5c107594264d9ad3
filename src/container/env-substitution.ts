import type { ConfigProblems } from './config-problems.js';

/** A config path as keys and array indexes, e.g. `['agents', 'support', 'maxToolIterations']`. */
export type ConfigPath = readonly (string | number)[];

/** The type a config value must have, as far as a schema says; `undefined` when nothing does. */
export type ExpectedType = 'string' | 'number' | 'integer' | 'boolean' | undefined;

/** A value that was exactly one `${VAR}` reference: its type is decided where the value is used. */
export interface WholeSubstitution {
  readonly path: ConfigPath;
  /** As written, e.g. `${MAX}` or `${RETRIES:-0}`. */
  readonly expression: string;
  /** The variable's value (or the default). */
  readonly text: string;
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const WHOLE_REF = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}$/;
const NUMBER_TEXT = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

export function formatPath(path: ConfigPath): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : out ? `.${key}` : key;
  return out;
}

/**
 * Replaces `${VAR}` / `${VAR:-default}` in every string from `env`. Each unset variable without a
 * default is one problem, however many values use it. Values that are one reference as a whole
 * are returned too: they are strings here and get their type from the schema later.
 */
export function substituteEnv(value: unknown, env: NodeJS.ProcessEnv, problems: ConfigProblems): { value: unknown; whole: WholeSubstitution[] } {
  const whole: WholeSubstitution[] = [];
  const unset = new Map<string, string[]>();
  const walk = (node: unknown, path: ConfigPath): unknown => {
    if (typeof node === 'string') {
      let missing = false;
      const text = node.replace(ENV_REF, (_match, name: string, fallback: string | undefined) => {
        const found = env[name];
        if (found !== undefined) return found;
        if (fallback !== undefined) return fallback;
        missing = true;
        unset.set(name, [...(unset.get(name) ?? []), formatPath(path)]);
        return '';
      });
      if (!missing && WHOLE_REF.test(node)) whole.push({ path, expression: node, text });
      return text;
    }
    if (Array.isArray(node)) return node.map((v, i) => walk(v, [...path, i]));
    if (node && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) out[k] = walk(v, [...path, k]);
      return out;
    }
    return node;
  };
  const result = walk(value, []);
  for (const [name, paths] of unset) {
    const also = paths.length > 1 ? `; also used at ${paths.slice(1).join(', ')}` : '';
    problems.addShared(paths, `environment variable ${name} is not set (referenced as \${${name}}${also}). Set it, or give a default: \${${name}:-value}.`);
  }
  return { value: result, whole };
}

const DESCRIPTION: Record<Exclude<ExpectedType, 'string' | undefined>, string> = {
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
};

/**
 * Gives each whole substitution under `root` the type `expectedAt` says its path holds: a number,
 * an integer or a boolean is parsed from the text, a string stays a string. Where nothing says
 * (a provider option no schema describes) the text is read as YAML reads a plain value: `true` /
 * `false`, a number, else a string. Text that does not parse is one problem at its path.
 */
export function coerceSubstitutions(
  root: Record<string, unknown>,
  subs: readonly WholeSubstitution[],
  expectedAt: (path: ConfigPath) => ExpectedType,
  problems: ConfigProblems,
  base: ConfigPath = [],
): void {
  for (const sub of subs) {
    const relative = sub.path.slice(base.length);
    const expected = expectedAt(relative);
    const value = expected === undefined ? inferred(sub.text) : parseAs(expected, sub.text);
    if (value === undefined) {
      const type = expected as keyof typeof DESCRIPTION;
      problems.add(formatPath(sub.path), `expected ${DESCRIPTION[type]} from ${sub.expression} but found ${JSON.stringify(sub.text)}. Set ${variableOf(sub.expression)} to ${DESCRIPTION[type]}.`);
      continue;
    }
    setAt(root, relative, value);
  }
}

/** The whole substitutions at or under `base` (e.g. one plugin's settings). */
export function substitutionsUnder(subs: readonly WholeSubstitution[], base: ConfigPath): WholeSubstitution[] {
  return subs.filter((s) => s.path.length > base.length && base.every((key, i) => s.path[i] === key));
}

function parseAs(expected: Exclude<ExpectedType, undefined>, text: string): string | number | boolean | undefined {
  const trimmed = text.trim();
  switch (expected) {
    case 'string':
      return text;
    case 'number':
      return NUMBER_TEXT.test(trimmed) ? Number(trimmed) : undefined;
    case 'integer':
      return NUMBER_TEXT.test(trimmed) && Number.isInteger(Number(trimmed)) ? Number(trimmed) : undefined;
    case 'boolean':
      return trimmed === 'true' ? true : trimmed === 'false' ? false : undefined;
  }
}

function inferred(text: string): string | number | boolean {
  return parseAs('boolean', text) ?? parseAs('number', text) ?? text;
}

function variableOf(expression: string): string {
  return WHOLE_REF.exec(expression)?.[1] ?? expression;
}

function setAt(root: Record<string, unknown>, path: ConfigPath, value: unknown): void {
  let node: unknown = root;
  for (const key of path.slice(0, -1)) {
    if (!node || typeof node !== 'object') return;
    node = (node as Record<string | number, unknown>)[key];
  }
  if (node && typeof node === 'object') (node as Record<string | number, unknown>)[path.at(-1)!] = value;
}
