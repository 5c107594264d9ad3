import type OpenAI from 'openai';
import { definitionFingerprint, type ToolDeclaration } from 'skein';
import { call } from './openai-assistant-calls.js';
import { assistantCreateParams, DEFINITION_METADATA_KEY, FINGERPRINT_METADATA_KEY, type OpenAIAssistantDefinition } from './openai-assistant-definition.js';

type Assistant = OpenAI.Beta.Assistants.Assistant;
type CreateParams = OpenAI.Beta.Assistants.AssistantCreateParams;


/**
 * The assistant a definition (without an id) stands for, so every process and container
 * configured with it shares one assistant instead of creating its own:
 * - the assistants of the account tagged with this definition's key are listed (all pages);
 * - none: one is created, tagged; then the list is read again and, when another process created
 *   one at the same time, the oldest is kept by everyone and this process deletes its own copy;
 * - found with the same fingerprint: used as it is;
 * - found with another fingerprint (the definition changed): updated in place, same id, so
 *   threads made with it go on.
 */
export async function provisionAssistant(client: OpenAI, definition: OpenAIAssistantDefinition, tools: readonly ToolDeclaration[]): Promise<Assistant> {
  const params = assistantCreateParams(definition, tools);
  const fingerprint = definitionFingerprint(params);
  const key = definitionKey(definition, fingerprint);
  const tagged: CreateParams = { ...params, metadata: { ...params.metadata, [DEFINITION_METADATA_KEY]: key, [FINGERPRINT_METADATA_KEY]: fingerprint } };
  const found = (await assistantsOfDefinition(client, key))[0];
  if (found) {
    if (found.metadata && (found.metadata as Record<string, string>)[FINGERPRINT_METADATA_KEY] === fingerprint) return found;
    return call(() => client.beta.assistants.update(found.id, updateParams(tagged)));
  }
  const created = await call(() => client.beta.assistants.create(tagged));
  const oldest = (await assistantsOfDefinition(client, key))[0];
  if (!oldest || oldest.id === created.id) return created;
  await client.beta.assistants.delete(created.id).catch(() => undefined);
  const current = (oldest.metadata as Record<string, string> | null)?.[FINGERPRINT_METADATA_KEY] === fingerprint;
  return current ? oldest : call(() => client.beta.assistants.update(oldest.id, updateParams(tagged)));
}

/** Every assistant made from this definition's key, oldest first (the same order in every process). */
export async function assistantsOfDefinition(client: OpenAI, key: string): Promise<Assistant[]> {
  return call(async () => {
    const out: Assistant[] = [];
    for await (const assistant of client.beta.assistants.list({ limit: 100 })) {
      if ((assistant.metadata as Record<string, string> | null)?.[DEFINITION_METADATA_KEY] === key) out.push(assistant);
    }
    return out.sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  });
}

/** The key assistants of this definition are tagged with: its name, else its fingerprint. */
export function definitionKey(definition: OpenAIAssistantDefinition, fingerprint: string): string {
  return definition.name ? `name:${definition.name}`.slice(0, 512) : `fingerprint:${fingerprint}`;
}

/** An update that makes the assistant exactly the definition: what it leaves out is cleared. */
function updateParams(params: CreateParams): OpenAI.Beta.Assistants.AssistantUpdateParams {
  return {
    model: params.model,
    name: params.name ?? null,
    description: params.description ?? null,
    instructions: params.instructions ?? null,
    tools: params.tools ?? [],
    tool_resources: params.tool_resources ?? { code_interpreter: { file_ids: [] }, file_search: { vector_store_ids: [] } },
    metadata: params.metadata ?? {},
    temperature: params.temperature ?? null,
    top_p: params.top_p ?? null,
    response_format: params.response_format ?? 'auto',
  };
}
