import { inversify } from './inversify-runtime.js';
import type { SkeinPlugin } from './skein-plugin.js';

export const NOT_A_PLUGIN = 'expected a SkeinPlugin ({ id, module: ContainerModule }), e.g. openaiPlugin({ apiKey }).';

/** A value shaped like a SkeinPlugin, with a module of the inversify Skein uses. */
export function isSkeinPlugin(value: unknown): value is SkeinPlugin {
  const plugin = value as Partial<SkeinPlugin> | undefined;
  return !!plugin && typeof plugin.id === 'string' && plugin.module instanceof inversify().ContainerModule;
}
