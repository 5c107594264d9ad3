/** An item as the Responses routes store it: any item with its id and type. */
export type StoredItem = Record<string, unknown> & { id: string; type: string };
