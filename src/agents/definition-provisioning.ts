import { definitionFingerprint } from './definition-fingerprint.js';

/** Service metadata key naming the definition an agent was made from: `name:<name>`, or `fingerprint:<fp>` when unnamed. */
export const DEFINITION_METADATA_KEY = 'skein_definition';
/** Service metadata key holding the fingerprint of the definition the agent is current with. */
export const FINGERPRINT_METADATA_KEY = 'skein_fingerprint';
/** Services keep metadata values up to this many characters (OpenAI and Foundry alike). */
const METADATA_VALUE_LIMIT = 512;

/** What provisioning needs to know of one agent on the service. */
export interface DefinedAgentFacts {
  readonly id: string;
  /** Creation time in milliseconds (or any unit, the same for every agent). */
  readonly createdAt: number;
  readonly metadata: Readonly<Record<string, string>> | null | undefined;
}

/**
 * The few calls on a service's agents (OpenAI assistants, Foundry agents) that finding, updating
 * and creating the agent of a definition takes. `tags` are the metadata entries to merge into the
 * agent's own metadata on create and update.
 */
export interface DefinedAgentService<A> {
  /** Every agent of the account or project, all pages. */
  listAll(): Promise<readonly A[]>;
  facts(agent: A): DefinedAgentFacts;
  create(tags: Readonly<Record<string, string>>): Promise<A>;
  update(id: string, tags: Readonly<Record<string, string>>): Promise<A>;
  delete(id: string): Promise<void>;
}

/** The tags that identify a definition's agent on the service. */
export interface DefinitionTags {
  readonly key: string;
  readonly fingerprint: string;
  readonly tags: Readonly<Record<string, string>>;
}

/**
 * Tags for a definition: its key is its name (so a changed definition still finds its agent and
 * updates it), else its fingerprint; `content` is what the fingerprint covers (what is sent to
 * the service when the agent is created).
 */
export function definitionTags(name: string | undefined, content: unknown): DefinitionTags {
  const fingerprint = definitionFingerprint(content);
  const key = (name ? `name:${name}` : `fingerprint:${fingerprint}`).slice(0, METADATA_VALUE_LIMIT);
  return { key, fingerprint, tags: { [DEFINITION_METADATA_KEY]: key, [FINGERPRINT_METADATA_KEY]: fingerprint } };
}

/** The service's agents made from the definition `key`, oldest first (the same order in every process). */
export async function agentsOfDefinition<A>(service: DefinedAgentService<A>, key: string): Promise<A[]> {
  const all = await service.listAll();
  return all
    .filter((agent) => service.facts(agent).metadata?.[DEFINITION_METADATA_KEY] === key)
    .sort((a, b) => compareAge(service.facts(a), service.facts(b)));
}

/**
 * The agent a definition (without an id) stands for, so every process and container configured
 * with it shares one agent instead of creating its own:
 * - the agents tagged with this definition's key are listed (all pages);
 * - found and current (same fingerprint): used as it is;
 * - found with another fingerprint (the definition changed): updated in place, same id, so threads
 *   made with it go on;
 * - none: one is created, tagged; the list is read again and, when another process created one at
 *   the same moment, the oldest is kept by everyone and this process deletes its own copy.
 * Agents without the tags are never used or changed.
 */
export async function provisionDefinedAgent<A>(service: DefinedAgentService<A>, definition: DefinitionTags): Promise<A> {
  const found = (await agentsOfDefinition(service, definition.key))[0];
  if (found) return current(service, found, definition);
  const created = await service.create(definition.tags);
  const oldest = (await agentsOfDefinition(service, definition.key))[0];
  if (!oldest || service.facts(oldest).id === service.facts(created).id) return created;
  await service.delete(service.facts(created).id).catch(() => undefined);
  return current(service, oldest, definition);
}

function current<A>(service: DefinedAgentService<A>, agent: A, definition: DefinitionTags): Promise<A> | A {
  const facts = service.facts(agent);
  return facts.metadata?.[FINGERPRINT_METADATA_KEY] === definition.fingerprint ? agent : service.update(facts.id, definition.tags);
}

function compareAge(a: DefinedAgentFacts, b: DefinedAgentFacts): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
