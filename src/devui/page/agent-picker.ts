import type { AgentInfo } from '../devui-api-types.js';
import { api, showError } from './api-client.js';
import { $, agentSelect, el } from './dom.js';
import { page } from './page-state.js';
import { loadTools } from './tool-runner.js';

const agentDescription = $('agent-description');
const agentFilter = $<HTMLSelectElement>('thread-agent-filter');

/** Fills the agent picker and the sidebar's agent filter with the configured agents. */
export async function loadAgents(): Promise<void> {
  page.agents = (await api<{ agents: AgentInfo[] }>('/api/agents')).agents;
  agentFilter.append(
    ...page.agents.map((a) => {
      const option = el('option', undefined, a.name);
      option.value = a.name;
      return option;
    }),
  );
  agentSelect.replaceChildren(
    ...page.agents.map((a) => {
      const option = el('option', undefined, a.displayName && a.displayName !== a.name ? `${a.name} (${a.displayName})` : a.name);
      option.value = a.name;
      return option;
    }),
  );
  describeAgent();
}

export function describeAgent(): void {
  void loadTools().catch(showError);
  const agent = page.agents.find((a) => a.name === agentSelect.value);
  // Said up front: the server refuses run settings for a durable agent.
  const durable = agent?.durable ? ' (durable: Stop cancels its run)' : '';
  agentDescription.textContent = agent ? `${agent.client}${durable}${agent.description ? ` — ${agent.description}` : ''}` : '';
}
