/** The Dev UI page. Assets ship in the package (no CDN): styles at /app.css, script at /app.js. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Skein Dev UI</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/app.css">
<script type="module" src="/app.js"></script>
</head>
<body>
<header class="topbar">
  <h1>Skein Dev UI</h1>
  <label>Agent <select id="agent" aria-label="Agent"></select></label>
  <span id="agent-description" class="muted"></span>
  <button type="button" id="new-chat">New chat</button>
</header>
<div class="layout">
  <aside class="sidebar">
    <div class="sidebar-head">
      <h2>Threads</h2>
      <button type="button" id="load-json" aria-label="Load a thread from a JSON file">Load JSON</button>
      <input type="file" id="upload" accept="application/json,.json" aria-label="Thread JSON file" hidden>
    </div>
    <div class="thread-filters" role="search">
      <input type="search" id="thread-search" aria-label="Search threads by title and content" placeholder="Search threads">
      <select id="thread-agent-filter" aria-label="Show threads of agent"><option value="">All agents</option></select>
    </div>
    <p id="threads-empty" class="muted">No threads yet. Send a message to start one.</p>
    <ul id="thread-list"></ul>
    <section id="tools-panel" aria-labelledby="tools-heading">
      <h2 id="tools-heading">Tools</h2>
      <p id="tools-empty" class="muted" hidden>This agent has no tools the Dev UI can run.</p>
      <ul id="tool-list"></ul>
      <ul id="tools-errors" role="status" aria-label="Tool sets that could not be listed" hidden></ul>
    </section>
  </aside>
  <main class="chat">
    <div class="thread-head">
      <h2 id="thread-title">New chat</h2>
      <span id="thread-meta" class="muted"></span>
      <button type="button" id="rename" hidden>Rename</button>
      <a id="download" class="button" hidden>Download JSON</a>
    </div>
    <div id="history-note" class="muted" hidden></div>
    <div id="load-note" role="status" hidden><span id="load-note-text"></span> <button type="button" id="load-copy" hidden>Load as a copy</button></div>
    <div id="messages" aria-live="polite" aria-label="Conversation"></div>
    <div id="error" role="alert" hidden><span id="error-text"></span> <button type="button" id="error-close" aria-label="Dismiss">&times;</button></div>
    <details id="run-settings">
      <summary>Run settings</summary>
      <div class="settings-grid">
        <label>Temperature <input id="set-temperature" type="number" min="0" max="2" step="0.1" placeholder="agent's"></label>
        <label>Max tokens <input id="set-max-tokens" type="number" min="1" step="1" placeholder="agent's"></label>
        <label>Model <input id="set-model" type="text" placeholder="agent's"></label>
        <label class="wide">Extra instructions <textarea id="set-instructions" rows="2" placeholder="Added after the agent's instructions"></textarea></label>
        <button type="button" id="settings-clear">Clear settings</button>
      </div>
      <p class="muted">Used by each run until cleared; each turn shows the settings it ran with.</p>
    </details>
    <form id="composer">
      <textarea id="input" rows="3" aria-label="Message" placeholder="Message the agent (Enter sends, Shift+Enter for a new line)"></textarea>
      <div class="actions">
        <button type="submit" id="send">Send</button>
        <button type="button" id="stop" disabled>Stop</button>
      </div>
    </form>
  </main>
</div>
<dialog id="tool-dialog" aria-labelledby="tool-title">
  <form id="tool-form" method="dialog">
    <h2 id="tool-title"></h2>
    <p id="tool-description" class="muted"></p>
    <p id="tool-source" class="muted" hidden></p>
    <label id="tool-approval-note" class="muted" hidden><input type="checkbox" id="tool-approve"> In a conversation this tool asks for approval first: I approve running it now.</label>
    <div id="tool-fields"></div>
    <div class="actions">
      <button type="submit" id="tool-run" value="run">Run tool</button>
      <button type="button" id="tool-close">Close</button>
    </div>
    <pre id="tool-output" role="status" hidden></pre>
  </form>
</dialog>
</body>
</html>
`;
