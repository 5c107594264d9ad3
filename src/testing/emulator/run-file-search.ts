import { omit } from './bad-request.js';
import { type FilesState, searchFiles } from './files-routes.js';
import type { RouteContext } from './router.js';
import { type Json, nowSeconds } from './run-simulator.js';

/**
 * File search inside an Assistants run: the best sentence of the attached vector stores' files
 * for the question, recorded as a completed `file_search` tool-call step (made by `newStep`),
 * answered as cited text `According to <file>: "<sentence>"【0:0†source】` with a `file_citation`
 * annotation over the marker. Undefined when no store is attached or nothing matches.
 */
export function fileSearchAnswer(
  files: FilesState,
  storeIds: readonly string[],
  question: string,
  context: RouteContext,
  newStep: (type: string, details: Json) => Json,
): Json | undefined {
  if (storeIds.length === 0) return undefined;
  const hit = searchFiles(files, storeIds, question);
  if (!hit) return undefined;
  const step = newStep('tool_calls', {
    type: 'tool_calls',
    tool_calls: [
      {
        id: context.ids.next('call_'),
        type: 'file_search',
        file_search: {
          ranking_options: { ranker: 'default_2024_08_21', score_threshold: 0 },
          results: [{ file_id: hit.fileId, file_name: hit.filename, score: hit.score, content: [{ type: 'text', text: hit.sentence }] }],
        },
      },
    ],
  });
  step.status = 'completed';
  step.completed_at = nowSeconds();
  const marker = '【0:0†source】';
  const value = `According to ${hit.filename}: "${hit.sentence}"${marker}`;
  const start = value.length - marker.length;
  return { value, annotations: [{ type: 'file_citation', text: marker, start_index: start, end_index: value.length, file_citation: { file_id: hit.fileId } }] };
}

/** A run's steps as listed: file search results carry their text only when `include` asks for it. */
export function stepsAsAsked(steps: Json[], query: Record<string, string>): Json[] {
  const withContent = Object.entries(query).some(([k, v]) => k.startsWith('include') && v.includes('file_search.results[*].content'));
  if (withContent) return steps;
  return steps.map((step) => {
    const calls = (step.step_details as { tool_calls?: Json[] }).tool_calls;
    if (!calls?.some((c) => c.type === 'file_search')) return step;
    const stripped = calls.map((c) => {
      if (c.type !== 'file_search') return c;
      const search = c.file_search as { results?: Json[] };
      return { ...c, file_search: { ...search, results: search.results?.map((r) => omit(r, 'content')) } };
    });
    return { ...step, step_details: { ...(step.step_details as Json), tool_calls: stripped } };
  });
}
