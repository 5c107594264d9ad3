import { api, ApiError } from './api-client.js';
import { $, agentSelect, el } from './dom.js';
import { describeSource, formatMs, stringify } from './format.js';
import type { JsonSchema, ToolInfo } from './page-types.js';

const toolDialog = $<HTMLDialogElement>('tool-dialog');
const toolFields = $('tool-fields');
const toolOutput = $<HTMLPreElement>('tool-output');
let openTool: ToolInfo | undefined;

export async function loadTools(): Promise<void> {
  const agent = agentSelect.value;
  const { tools, toolSetErrors = [] } = await api<{ tools: ToolInfo[]; toolSetErrors?: { toolSet: string; name: string; message: string }[] }>(`/api/agents/${encodeURIComponent(agent)}/tools`);
  if (agentSelect.value !== agent) return;
  $('tools-empty').hidden = tools.length > 0 || toolSetErrors.length > 0;
  const errors = $('tools-errors');
  errors.hidden = toolSetErrors.length === 0;
  errors.replaceChildren(...toolSetErrors.map((e) => el('li', undefined, `Could not list the tools of ${e.toolSet}: ${e.name}: ${e.message}`)));
  $('tool-list').replaceChildren(
    ...tools.map((tool) => {
      const item = el('li');
      const button = el('button', undefined, tool.name);
      button.type = 'button';
      button.title = tool.description ?? '';
      const source = tool.source ? describeSource(tool.source, tool.name) : undefined;
      if (source) button.append(el('span', 'tool-source', ` · ${source}`));
      button.setAttribute('aria-label', `Run tool ${tool.name}${source ? ` from ${source}` : ''} by hand`);
      button.addEventListener('click', () => showToolForm(tool));
      item.append(button);
      return item;
    }),
  );
}

const typeOf = (schema: JsonSchema) => (Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type);

/** A form field per property of the tool's argument schema: text, number, checkbox, a choice, or JSON for the rest. */
function fieldFor(name: string, schema: JsonSchema, required: boolean): HTMLLabelElement {
  const type = typeOf(schema);
  const label = el('label');
  label.dataset.name = name;
  label.dataset.type = schema.enum ? 'enum' : (type ?? 'json');
  const caption = `${name}${required ? ' (required)' : ''}${schema.description ? ` — ${schema.description}` : ''}`;
  let control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
  if (schema.enum) {
    control = el('select');
    if (!required) control.append(el('option', undefined, ''));
    for (const value of schema.enum) {
      const option = el('option', undefined, String(value));
      option.value = JSON.stringify(value);
      control.append(option);
    }
  } else if (type === 'boolean') {
    control = el('input');
    control.type = 'checkbox';
    label.className = 'checkbox';
  } else if (type === 'number' || type === 'integer') {
    control = el('input');
    control.type = 'number';
    control.step = type === 'integer' ? '1' : 'any';
  } else if (type === 'string') {
    control = el('input');
    control.type = 'text';
  } else {
    control = el('textarea');
    control.rows = 3;
    control.placeholder = 'JSON';
  }
  control.name = name;
  control.required = required && type !== 'boolean';
  if (label.className === 'checkbox') label.append(control, document.createTextNode(caption));
  else label.append(document.createTextNode(caption), control);
  return label;
}

function showToolForm(tool: ToolInfo): void {
  openTool = tool;
  $('tool-title').textContent = tool.name;
  $('tool-description').textContent = tool.description ?? '';
  const source = $('tool-source');
  source.hidden = !tool.source;
  source.textContent = tool.source ? `Runs on ${describeSource(tool.source, tool.name)}.` : '';
  $('tool-approval-note').hidden = !tool.requiresApproval;
  ($('tool-approve') as HTMLInputElement).checked = false;
  const required = new Set(tool.parameters.required ?? []);
  toolFields.replaceChildren(...Object.entries(tool.parameters.properties ?? {}).map(([name, schema]) => fieldFor(name, schema, required.has(name))));
  toolOutput.hidden = true;
  toolDialog.showModal();
}

/** The arguments object the form describes; empty optional fields are left out. */
function readToolArguments(): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const label of Array.from(toolFields.querySelectorAll<HTMLLabelElement>('label'))) {
    const name = label.dataset.name!;
    const control = label.querySelector<HTMLInputElement>('input, select, textarea')!;
    const value = control.value.trim();
    switch (label.dataset.type) {
      case 'boolean':
        args[name] = control.checked;
        break;
      case 'number':
      case 'integer':
        if (value) args[name] = Number(value);
        break;
      case 'string':
        if (value || control.required) args[name] = control.value;
        break;
      default:
        if (!value) break;
        try {
          args[name] = JSON.parse(value);
        } catch (error) {
          throw new ApiError({ name: 'SerializationError', message: `${name}: not JSON (${(error as Error).message}).` });
        }
    }
  }
  return args;
}

async function runTool(): Promise<void> {
  const tool = openTool;
  if (!tool) return;
  toolOutput.hidden = false;
  toolOutput.dataset.outcome = 'running';
  toolOutput.textContent = `Running ${tool.name}...`;
  try {
    const reply = await api<{ result?: unknown; error?: string; durationMs: number }>(`/api/agents/${encodeURIComponent(agentSelect.value)}/tools/${encodeURIComponent(tool.name)}`, {
      method: 'POST',
      // The box is the approval a tool that needs one must have (without it the server refuses, saying so).
      body: JSON.stringify({ arguments: readToolArguments(), ...(tool.requiresApproval && ($('tool-approve') as HTMLInputElement).checked ? { approved: true } : {}) }),
    });
    toolOutput.dataset.outcome = reply.error !== undefined ? 'error' : 'ok';
    toolOutput.textContent = `${reply.error !== undefined ? `Error: ${reply.error}` : `Result: ${stringify(reply.result)}`}\n(${formatMs(reply.durationMs)})`;
  } catch (error) {
    toolOutput.dataset.outcome = 'error';
    const body = error instanceof ApiError ? error.body : { name: 'Error', message: String(error) };
    toolOutput.textContent = `${body.name}: ${body.message}`;
  }
}

$('tool-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void runTool();
});
$('tool-close').addEventListener('click', () => toolDialog.close());
