import type OpenAI from 'openai';
import { agentsOfDefinition, definitionTags, provisionDefinedAgent, type DefinedAgentService, type ToolDeclaration } from 'skein';
import { call } from './openai-assistant-calls.js';
import { assistantCreateParams, type OpenAIAssistantDefinition } from './openai-assistant-definition.js';

type Assistant = OpenAI.Beta.Assistants.Assistant;
type CreateParams = OpenAI.Beta.Assistants.AssistantCreateParams;

/**
 * The assistant a definition (without an id) stands for, shared by every process and container
 * configured with it (found by its tags, updated when the definition changed, created only when
 * none exists; see `provisionDefinedAgent`).
 */
export async function provisionAssistant(client: OpenAI, definition: OpenAIAssistantDefinition, tools: readonly ToolDeclaration[]): Promise<Assistant> {
  const params = assistantCreateParams(definition, tools);
  return call(() => provisionDefinedAgent(assistantService(client, params), definitionTags(definition.name, params)));
}

/** Every assistant made from this definition, oldest first. */
export async function assistantsOfThisDefinition(client: OpenAI, definition: OpenAIAssistantDefinition, tools: readonly ToolDeclaration[]): Promise<Assistant[]> {
  const params = assistantCreateParams(definition, tools);
  return call(() => agentsOfDefinition(assistantService(client, params), definitionTags(definition.name, params).key));
}

function assistantService(client: OpenAI, params: CreateParams): DefinedAgentService<Assistant> {
  const tagged = (tags: Readonly<Record<string, string>>): CreateParams => ({ ...params, metadata: { ...params.metadata, ...tags } });
  return {
    listAll: async () => {
      const all: Assistant[] = [];
      for await (const assistant of client.beta.assistants.list({ limit: 100 })) all.push(assistant);
      return all;
    },
    facts: (assistant) => ({ id: assistant.id, createdAt: assistant.created_at, metadata: assistant.metadata as Record<string, string> | null }),
    create: (tags) => client.beta.assistants.create(tagged(tags)),
    update: (id, tags) => client.beta.assistants.update(id, updateParams(tagged(tags))),
    delete: async (id) => {
      await client.beta.assistants.delete(id);
    },
  };
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
