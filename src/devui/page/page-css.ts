/** The Dev UI's styles, shipped with the package. */
export const PAGE_CSS = `
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d232b; background: #f4f6f8; height: 100vh; display: flex; flex-direction: column; }
.topbar { display: flex; align-items: center; gap: 12px; padding: 8px 16px; background: #1f2a37; color: #fff; }
.topbar h1 { font-size: 16px; margin: 0 12px 0 0; }
.topbar .muted { color: #c8d0da; }
select, textarea, button, .button { font: inherit; }
button, .button { border: 1px solid #b7c0cc; background: #fff; color: #1d232b; border-radius: 6px; padding: 4px 10px; cursor: pointer; text-decoration: none; display: inline-block; }
[hidden] { display: none !important; } /* the hidden attribute wins over the display of buttons and .button links */
button:disabled { opacity: .5; cursor: default; }
#send { background: #2563eb; border-color: #2563eb; color: #fff; }
#stop:not(:disabled) { background: #dc2626; border-color: #dc2626; color: #fff; }
.layout { flex: 1; display: flex; min-height: 0; }
.sidebar { width: 290px; border-right: 1px solid #d8dee6; background: #fff; overflow-y: auto; padding: 8px; }
.sidebar-head { display: flex; align-items: center; justify-content: space-between; }
.sidebar h2, .thread-head h2 { font-size: 14px; margin: 6px 0; }
#thread-list { list-style: none; margin: 0; padding: 0; }
.thread { display: flex; align-items: flex-start; gap: 4px; border-radius: 6px; padding: 6px; }
.thread.active { background: #e6eefc; }
.thread .open { flex: 1; text-align: left; border: none; background: transparent; padding: 0; }
.thread .title { display: block; font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 210px; }
.thread .meta { display: block; font-size: 12px; color: #5b6776; }
.thread .delete { border: none; color: #9b1c1c; background: transparent; padding: 0 4px; font-size: 12px; }
.muted { color: #5b6776; font-size: 12px; }
.chat { flex: 1; display: flex; flex-direction: column; min-width: 0; padding: 8px 16px; }
.thread-head { display: flex; align-items: baseline; gap: 10px; }
#messages { flex: 1; overflow-y: auto; padding: 8px 0; }
.message { max-width: 860px; margin: 6px 0; padding: 8px 12px; border-radius: 8px; background: #fff; border: 1px solid #dfe4ea; }
.message[data-role="user"] { background: #e8f0fe; border-color: #c9d9fb; margin-left: 60px; }
.message[data-role="tool"] { background: #fbfaf4; }
.message[data-role="system"] { background: #f2f2f2; }
.message-head { display: flex; gap: 8px; align-items: baseline; margin-bottom: 2px; }
.message .author { font-size: 12px; font-weight: 600; color: #4b5563; }
.message .fork { margin-left: auto; font-size: 11px; padding: 0 6px; }
.message .time { font-size: 11px; color: #6b7280; }
.message .text { white-space: pre-wrap; word-wrap: break-word; }
.message .text.markdown { white-space: normal; }
.markdown p, .markdown ul, .markdown ol, .markdown blockquote { margin: 4px 0; }
.markdown blockquote { border-left: 3px solid #cbd5e1; padding-left: 8px; color: #4b5563; }
.markdown code { font-family: ui-monospace, monospace; font-size: 12px; background: #f1f3f6; border-radius: 4px; padding: 0 3px; }
.markdown img, .message-image { max-width: 100%; max-height: 360px; display: block; margin: 4px 0; border-radius: 4px; }
.code-block { position: relative; margin: 6px 0; }
.code-block pre { margin: 0; padding: 8px 10px; background: #1f2a37; color: #e5e7eb; border-radius: 6px; overflow-x: auto; }
.code-block pre code { background: transparent; color: inherit; padding: 0; }
.code-block .copy-code { position: absolute; top: 4px; right: 4px; font-size: 11px; padding: 1px 6px; }
details.tool-call { margin: 6px 0; border: 1px solid #e2d9b8; border-radius: 6px; background: #fffdf2; padding: 4px 8px; }
details.tool-call summary { cursor: pointer; font-family: ui-monospace, monospace; font-size: 12px; }
details.tool-call pre { margin: 4px 0; white-space: pre-wrap; word-break: break-word; font-size: 12px; }
.tool-result.failed { color: #9b1c1c; }
.approval { margin: 6px 0; border: 1px solid #f0b35a; border-radius: 6px; background: #fff7ea; padding: 6px 8px; }
.approval[data-state="settled"] { border-color: #d8dee6; background: #f7f8fa; }
.approval-title { font-weight: 600; font-size: 13px; }
.approval pre { margin: 4px 0; white-space: pre-wrap; word-break: break-word; font-size: 12px; }
.approval-actions { display: flex; gap: 6px; align-items: center; margin: 4px 0; }
.approval-actions .approve:not(:disabled) { background: #15803d; border-color: #15803d; color: #fff; }
.approval-actions .reject:not(:disabled) { color: #9b1c1c; border-color: #e8a3a3; }
.approval-actions .reason { flex: 1; max-width: 340px; border: 1px solid #b7c0cc; border-radius: 6px; padding: 3px 6px; font: inherit; }
.approval-status, .approval-note { display: block; font-size: 12px; color: #5b6776; }
.thread .awaiting { display: inline-block; margin-top: 2px; font-size: 11px; color: #92400e; background: #fff1d6; border-radius: 4px; padding: 0 5px; }
details.trace { max-width: 860px; margin: 2px 0 6px; border: 1px solid #d8dee6; border-radius: 6px; background: #fff; padding: 4px 8px; font-size: 12px; }
details.trace > summary { cursor: pointer; color: #374151; }
.span-row { border-top: 1px dashed #e5e7eb; padding: 3px 0; }
.span-row[data-status="error"] .span-name { color: #9b1c1c; }
.span-head { display: flex; align-items: center; gap: 8px; }
.span-name { font-family: ui-monospace, monospace; flex: 0 0 240px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.span-bar { position: relative; flex: 1; height: 8px; background: #f1f3f6; border-radius: 4px; }
.span-fill { position: absolute; top: 0; bottom: 0; background: #7aa7ff; border-radius: 4px; }
.span-row[data-operation="execute_tool"] .span-fill { background: #e0a526; }
.span-row[data-operation="invoke_agent"] .span-fill { background: #9aa5b1; }
.span-duration { min-width: 64px; text-align: right; color: #4b5563; }
.span-facts { color: #4b5563; }
.span-row pre { margin: 2px 0; white-space: pre-wrap; word-break: break-word; }
.span-error { color: #9b1c1c; }
.thread-traces h3 { font-size: 13px; margin: 12px 0 4px; }
.usage { font-size: 12px; color: #5b6776; margin: 2px 0 10px; }
.turn-note { font-size: 12px; color: #92400e; margin: 2px 0 10px; }
#error { background: #fdecec; border: 1px solid #f5b5b5; color: #7f1d1d; border-radius: 6px; padding: 8px 12px; margin: 6px 0; white-space: pre-wrap; }
#error-close { float: right; border: none; background: transparent; color: inherit; }
#load-note { background: #eef4fb; border: 1px solid #b9cfe8; color: #1e3a5f; border-radius: 6px; padding: 8px 12px; margin: 6px 0; }
#run-settings { margin: 4px 0; font-size: 13px; }
#run-settings summary { cursor: pointer; color: #374151; }
.settings-grid { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: flex-end; margin: 6px 0; }
.settings-grid label { display: flex; flex-direction: column; font-size: 12px; color: #4b5563; }
.settings-grid label.wide { flex: 1; min-width: 240px; }
.settings-grid input, .settings-grid textarea { font: inherit; border: 1px solid #b7c0cc; border-radius: 6px; padding: 3px 6px; width: 130px; }
.settings-grid textarea { width: 100%; resize: vertical; }
.turn-settings { font-size: 12px; color: #374151; background: #eef2f7; border-radius: 4px; padding: 2px 8px; margin: 2px 0 4px 60px; max-width: 800px; }
.thread-filters { display: flex; gap: 4px; margin: 4px 0 6px; }
.thread-filters input { flex: 1; min-width: 0; font: inherit; border: 1px solid #b7c0cc; border-radius: 6px; padding: 3px 6px; }
.thread .excerpt { display: block; font-size: 12px; color: #374151; font-style: italic; }
#tools-panel { margin-top: 14px; border-top: 1px solid #e5e7eb; }
#tool-list { list-style: none; margin: 0; padding: 0; }
#tool-list button { width: 100%; text-align: left; margin: 2px 0; font-family: ui-monospace, monospace; font-size: 12px; }
#tool-list .tool-source { color: #6b7280; font-family: system-ui, sans-serif; font-size: 11px; }
#tools-errors { list-style: none; margin: 4px 0; padding: 0; color: #9b1c1c; font-size: 12px; }
#tool-dialog { border: 1px solid #b7c0cc; border-radius: 8px; min-width: 420px; max-width: 640px; }
#tool-dialog h2 { font-size: 15px; margin: 0 0 4px; font-family: ui-monospace, monospace; }
#tool-fields label { display: flex; flex-direction: column; margin: 6px 0; font-size: 12px; color: #374151; }
#tool-fields label.checkbox { flex-direction: row; gap: 6px; align-items: center; }
#tool-fields input:not([type="checkbox"]), #tool-fields select, #tool-fields textarea { font: inherit; border: 1px solid #b7c0cc; border-radius: 6px; padding: 3px 6px; }
#tool-output { background: #f7f8fa; border: 1px solid #d8dee6; border-radius: 6px; padding: 6px 8px; white-space: pre-wrap; word-break: break-word; max-height: 300px; overflow: auto; }
#tool-output[data-outcome="error"] { color: #9b1c1c; }
#composer { display: flex; gap: 8px; align-items: flex-end; }
#composer textarea { flex: 1; resize: vertical; border: 1px solid #b7c0cc; border-radius: 6px; padding: 8px; }
#composer .actions { display: flex; flex-direction: column; gap: 6px; }
`;
