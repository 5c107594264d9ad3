import { createRequire } from 'node:module';
import type { ClassConstructor } from 'class-transformer';
import type { AIContent } from '../messages/content.js';
import { type ContentKindSerializer, ShapeContentKindSerializer } from './content-kind-serializer.js';
import type { ShapeSpec } from './shape.js';

/**
 * For plugins that model a content kind as a class: the registry checks the discriminator and
 * every field first, then class-transformer builds the instance from a copy. class-transformer
 * never sees unchecked data (it falls back to the base class on unknown discriminators and
 * mutates its input), which is why this checks before mapping.
 */
export class ClassContentKindSerializer<T extends AIContent> implements ContentKindSerializer {
  readonly #shape: ShapeContentKindSerializer;
  constructor(
    readonly kind: T['kind'],
    private readonly type: ClassConstructor<T>,
    spec: ShapeSpec,
  ) {
    this.#shape = new ShapeContentKindSerializer(kind, spec);
  }

  read(value: Record<string, unknown>, path: string): AIContent {
    const checked = this.#shape.read(value, path);
    return classTransformer().plainToInstance(this.type, { ...checked });
  }
}

type ClassTransformer = typeof import('class-transformer');
let loaded: ClassTransformer | undefined;
/** Loaded on first use (it is CommonJS, so synchronously): most apps define no class-backed kinds. */
function classTransformer(): ClassTransformer {
  return (loaded ??= createRequire(import.meta.url)('class-transformer') as ClassTransformer);
}
