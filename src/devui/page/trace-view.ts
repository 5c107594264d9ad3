import type { TurnTrace } from '../turn-traces.js';
import { el, messages } from './dom.js';
import { describeSettings, describeSource, formatMs, prettyArguments } from './format.js';

/** A turn's spans as a timeline: one row per span, indented under its parent, a bar for when it ran. */
export function traceView(trace: TurnTrace, label: string): HTMLDetailsElement {
  const details = el('details', 'trace');
  details.dataset.runId = trace.runId;
  details.append(el('summary', undefined, `${label} · ${trace.spans.length} spans · ${formatMs(trace.durationMs)}`));
  if (trace.settings) details.append(el('div', 'turn-settings', describeSettings(trace.settings)));
  const depth = new Map<string, number>();
  const total = Math.max(trace.durationMs, 1);
  for (const span of trace.spans) {
    const level = span.parentSpanId !== undefined && depth.has(span.parentSpanId) ? depth.get(span.parentSpanId)! + 1 : 0;
    depth.set(span.spanId, level);
    const row = el('div', 'span-row');
    row.dataset.operation = span.operation ?? '';
    row.dataset.status = span.status;
    const head = el('div', 'span-head');
    const bar = el('span', 'span-bar');
    const fill = el('span', 'span-fill');
    fill.style.left = `${(span.startMs / total) * 100}%`;
    fill.style.width = `${Math.max((span.durationMs / total) * 100, 0.5)}%`;
    bar.append(fill);
    // Only the name is indented under its parent, so every bar sits on the same time axis.
    const name = el('span', 'span-name', span.name);
    name.style.paddingLeft = `${level * 14}px`;
    head.append(name, bar, el('span', 'span-duration', formatMs(span.durationMs)));
    row.append(head);
    const info = el('div', 'span-details');
    info.style.paddingLeft = `${level * 14}px`;
    const facts: string[] = [];
    if (span.model) facts.push(`model ${span.model}`);
    if (span.inputTokens !== undefined || span.outputTokens !== undefined) facts.push(`tokens ${span.inputTokens ?? '?'} in / ${span.outputTokens ?? '?'} out`);
    if (span.finishReasons?.length) facts.push(`finish ${span.finishReasons.join(', ')}`);
    if (span.toolSource) facts.push(describeSource(span.toolSource, span.toolName));
    if (facts.length) info.append(el('div', 'span-facts', facts.join(' · ')));
    if (span.toolArguments !== undefined) info.append(el('pre', 'span-arguments', `Arguments: ${prettyArguments(span.toolArguments)}`));
    if (span.toolResult !== undefined) info.append(el('pre', 'span-result', `Result: ${prettyArguments(span.toolResult)}`));
    if (span.error !== undefined) info.append(el('div', 'span-error', `Error: ${span.error}`));
    for (const [title, body] of [['Request', span.request], ['Response', span.response]] as const) {
      if (body === undefined) continue;
      const raw = el('details', 'span-body');
      raw.append(el('summary', undefined, title), el('pre', undefined, prettyArguments(body)));
      info.append(raw);
    }
    row.append(info);
    details.append(row);
  }
  return details;
}

/** The traces of the open thread's turns taken this session, under its history. */
export function showThreadTraces(traces: readonly TurnTrace[]): void {
  if (!traces.length) return;
  const section = el('section', 'thread-traces');
  section.setAttribute('aria-label', 'Traces of this session\'s turns');
  section.append(el('h3', undefined, 'Traces of the turns taken in this session'));
  for (const trace of traces) section.append(traceView(trace, `Turn at ${new Date(trace.startedAt).toLocaleTimeString()}`));
  messages.append(section);
}
