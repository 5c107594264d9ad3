import { fileURLToPath } from 'node:url';
import type { ChatMessage } from 'skein';
import type { SqliteDriverName } from 'skein/store-sqlite';

/** The turn each cross-driver fixture file holds (thread key `fixture`). */
export const FIXTURE_TURN: ChatMessage[] = [
  { role: 'user', contents: [{ kind: 'text', text: 'Grüße, 世界 👋 — what is 2+2?' }] },
  { role: 'assistant', contents: [{ kind: 'function-call', callId: 'c1', name: 'add', arguments: '{"a":2,"b":2}' }] },
  { role: 'tool', contents: [{ kind: 'function-result', callId: 'c1', result: '4' }] },
];

export const sqliteFixtureFile = (driver: SqliteDriverName) => `written-by-${driver.replace(':', '-')}.sqlite3`;

/** The committed fixtures live in the source tree (tests run from dist/). */
export const SQLITE_FIXTURE_DIR = fileURLToPath(new URL('../../../test/stores/fixtures/', import.meta.url));
