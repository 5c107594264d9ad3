/** DOM helpers of the page's scripts, and the elements most of them write to. */

export const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The conversation. */
export const messages = $('messages');
/** The agent the next turn goes to. */
export const agentSelect = $<HTMLSelectElement>('agent');
