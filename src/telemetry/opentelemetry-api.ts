import type * as OpenTelemetry from '@opentelemetry/api';
import { loadPeer } from '../peers/optional-peer.js';

// @opentelemetry/api is an optional peer: loaded here, at run time, rather than linked
// statically, so importing skein/telemetry without it is a ConfigurationError naming it.
export const { SpanKind, SpanStatusCode, context, trace } = loadPeer<typeof OpenTelemetry>('skein/telemetry', '@opentelemetry/api');
export type SpanKind = OpenTelemetry.SpanKind;
export type SpanStatusCode = OpenTelemetry.SpanStatusCode;
