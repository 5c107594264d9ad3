import type { RouteRegistry } from './router.js';

/**
 * State kept per emulator (per route registry), created on first use, so route sets that share
 * it (Responses and Conversations) find the same object and two emulators never share any.
 */
export function registryState<T extends object>(create: () => T): (registry: RouteRegistry) => T {
  const states = new WeakMap<RouteRegistry, T>();
  return (registry) => {
    let state = states.get(registry);
    if (!state) {
      state = create();
      states.set(registry, state);
    }
    return state;
  };
}
