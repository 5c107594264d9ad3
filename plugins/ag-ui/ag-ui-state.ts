import type { AgentThread, JsonValue } from 'skein';

/** The thread-state key the AG-UI shared state is kept under (so it is stored, serialized and forked with the thread). */
export const AG_UI_STATE_KEY = 'agUiState';

/**
 * The AG-UI shared state of a thread (what the client sent as `state`, as tools and context
 * providers left it); `undefined` when there is none yet.
 *
 * @example
 * const addItem = tool({
 *   name: 'add_item',
 *   parameters: z.object({ item: z.string() }),
 *   execute: ({ item }, { thread }) => {
 *     const state = (agUiStateOf(thread!) ?? { items: [] }) as { items: string[] };
 *     setAgUiState(thread!, { ...state, items: [...state.items, item] });
 *     return 'added';
 *   },
 * });
 */
export function agUiStateOf(thread: AgentThread): JsonValue | undefined {
  return thread.state[AG_UI_STATE_KEY];
}

/** Replaces the thread's AG-UI shared state; the server sends the change as STATE_DELTA (JSON Patch). */
export function setAgUiState(thread: AgentThread, state: JsonValue | undefined): void {
  const { [AG_UI_STATE_KEY]: _old, ...rest } = thread.state;
  thread.state = state === undefined ? rest : { ...rest, [AG_UI_STATE_KEY]: state };
}
