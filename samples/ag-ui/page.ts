/** The sample page: a chat on @ag-ui/client's HttpAgent, with approvals, a frontend tool and reload. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Skein over AG-UI</title>
<link rel="icon" href="data:,">
<style>
  body { font: 15px system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; transition: background .3s; }
  .message { padding: .4rem .6rem; margin: .3rem 0; border-radius: .4rem; background: #f3f3f3; white-space: pre-wrap; }
  .message[data-role="user"] { background: #dbeafe; text-align: right; }
  .message[data-role="tool"] { font-family: monospace; font-size: 13px; }
  #approvals .approval { border: 1px solid #f59e0b; padding: .5rem; margin: .5rem 0; }
  form { display: flex; gap: .5rem; margin-top: 1rem; } #input { flex: 1; }
  #error { color: #b91c1c; }
</style>
</head>
<body data-ready="false" data-busy="false" data-runs="0">
<h1>Skein agent over AG-UI</h1>
<p>Try: "My name is Ada.", "What is the weather in Paris?", "call delete_file {\\"path\\":\\"/tmp/x\\"}" (asks first),
"call change_background {\\"color\\":\\"lightyellow\\"}" (runs in this page). Reload any time.</p>
<div id="messages"></div>
<div id="approvals"></div>
<div id="error"></div>
<form id="form"><input id="input" autocomplete="off" placeholder="Message"><button id="send">Send</button><button id="new" type="button">New thread</button></form>
<script type="module" src="/app.js"></script>
</body>
</html>`;

export const APP_JS = `import { HttpAgent } from '@ag-ui/client';

const KEY = 'skein-ag-ui-thread';
let threadId = localStorage.getItem(KEY);
if (!threadId) {
  threadId = crypto.randomUUID();
  localStorage.setItem(KEY, threadId);
}
const agent = new HttpAgent({ url: '/agents/helper', threadId });
const tools = [{ name: 'change_background', description: 'Changes the background color of the page', parameters: { type: 'object', properties: { color: { type: 'string', description: 'a CSS color' } }, required: ['color'] } }];
const el = (id) => document.getElementById(id);
let busy = false;
let runs = 0;

function render() {
  el('messages').replaceChildren(...agent.messages.filter((m) => ['user', 'assistant', 'tool'].includes(m.role)).map((m) => {
    const div = document.createElement('div');
    div.className = 'message';
    div.dataset.role = m.role;
    const calls = m.role === 'assistant' && m.toolCalls ? m.toolCalls.map((c) => '[' + c.function.name + ' ' + c.function.arguments + ']').join(' ') : '';
    div.textContent = [typeof m.content === 'string' ? m.content : '', calls].filter(Boolean).join(' ');
    return div;
  }));
  el('approvals').replaceChildren(...agent.pendingInterrupts.map((i) => {
    const box = document.createElement('div');
    box.className = 'approval';
    box.textContent = i.message ?? i.reason;
    for (const approve of [true, false]) {
      const button = document.createElement('button');
      button.textContent = approve ? 'Approve' : 'Deny';
      button.dataset.interrupt = i.id;
      button.dataset.approve = String(approve);
      box.append(' ', button);
    }
    return box;
  }));
  document.body.dataset.busy = String(busy);
  document.body.dataset.runs = String(runs);
}

async function run(params = {}) {
  busy = true;
  el('error').textContent = '';
  render();
  let finished;
  try {
    await agent.runAgent({ tools, ...params }, { onRunFinishedEvent: ({ event }) => { finished = event; }, onRunErrorEvent: ({ event }) => { el('error').textContent = event.message; } });
  } catch (error) {
    el('error').textContent = String(error && error.message ? error.message : error);
  }
  const pending = finished && finished.outcome && finished.outcome.type === 'success' ? finished.outcome.pendingToolCallIds || [] : [];
  if (pending.length) {
    // Frontend tools run here, in the page; their results go back in the next run.
    for (const id of pending) {
      const call = agent.messages.flatMap((m) => m.toolCalls || []).find((c) => c.id === id);
      let result = 'unknown tool';
      if (call && call.function.name === 'change_background') {
        const { color } = JSON.parse(call.function.arguments);
        document.body.style.background = color;
        result = 'background is ' + color;
      }
      agent.addMessage({ id: crypto.randomUUID(), role: 'tool', toolCallId: id, content: result });
    }
    return run();
  }
  busy = false;
  runs++;
  document.body.dataset.ready = 'true';
  render();
}

el('form').addEventListener('submit', (event) => {
  event.preventDefault();
  const text = el('input').value.trim();
  if (!text || busy) return;
  el('input').value = '';
  agent.addMessage({ id: crypto.randomUUID(), role: 'user', content: text });
  void run();
});
el('approvals').addEventListener('click', (event) => {
  const button = event.target.closest('button');
  if (!button || busy) return;
  const approved = button.dataset.approve === 'true';
  void run({ resume: [{ interruptId: button.dataset.interrupt, status: approved ? 'resolved' : 'cancelled', payload: { approved } }] });
});
el('new').addEventListener('click', () => {
  localStorage.removeItem(KEY);
  location.reload();
});
// Connecting (or reloading mid-conversation): the thread as the server keeps it.
void run();
`;
