import { listAll } from './azure-ai-agents-errors.js';

/** Page size for walking a Foundry list: the service's largest. */
export const FOUNDRY_PAGE = 100;

type PageOptions = Parameters<Parameters<typeof listAll>[0]>[0] & { limit: number; after: string | undefined };

/**
 * Every item of a Foundry list, oldest first when the list is asked `order: 'asc'`. The SDK's
 * pager stops after the first page (it follows a `nextLink` the service never sends, not
 * `has_more`), so pages are walked here with `after`; each page keeps `listAll`'s error body.
 */
export async function listEveryPage<T extends { id: string }>(page: (options: PageOptions) => AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for (let after: string | undefined; ; ) {
    const batch = await listAll((o) => page({ ...o, limit: FOUNDRY_PAGE, after }));
    items.push(...batch);
    if (batch.length < FOUNDRY_PAGE) return items;
    after = batch[batch.length - 1]!.id;
  }
}
