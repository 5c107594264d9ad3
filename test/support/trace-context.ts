import { type Context, type ContextManager, ROOT_CONTEXT, type TextMapPropagator, context, propagation, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AsyncLocalStorage } from 'node:async_hooks';

/** What an OpenTelemetry Node SDK registers: an AsyncLocalStorage context manager (here, the least of one). */
export class AlsContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

/** The W3C `traceparent` header alone (what the SDK's W3CTraceContextPropagator does, without tracestate). */
export const traceparentPropagator: TextMapPropagator = {
  fields: () => ['traceparent'],
  inject(ctx, carrier, setter) {
    const span = trace.getSpanContext(ctx);
    if (span) setter.set(carrier, 'traceparent', `00-${span.traceId}-${span.spanId}-0${span.traceFlags & 1}`);
  },
  extract(ctx, carrier, getter) {
    const value = getter.get(carrier, 'traceparent');
    const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(Array.isArray(value) ? (value[0] ?? '') : (value ?? ''));
    if (!match) return ctx;
    return trace.setSpanContext(ctx, { traceId: match[1]!, spanId: match[2]!, traceFlags: parseInt(match[3]!, 16), isRemote: true });
  },
};

/**
 * For the enclosing describe: the globals an OpenTelemetry Node SDK sets (context manager, W3C
 * propagator), and a tracer provider whose spans are kept in memory (reset before each test).
 */
export function useTraceContext(): { exporter: InMemorySpanExporter; tracerProvider: BasicTracerProvider } {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  before(() => {
    context.setGlobalContextManager(new AlsContextManager());
    propagation.setGlobalPropagator(traceparentPropagator);
  });
  after(async () => {
    context.disable();
    propagation.disable();
    await tracerProvider.shutdown();
  });
  beforeEach(() => exporter.reset());
  return { exporter, tracerProvider };
}
