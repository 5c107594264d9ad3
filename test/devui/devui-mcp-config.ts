import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVERYTHING, FAULT_SERVER } from '../mcp/mcp-fixtures.js';

const TOOLS_PLUGIN = fileURLToPath(new URL('../../samples/devui/devui-tools-plugin.js', import.meta.url));

/**
 * A Dev UI config whose `helper` has a local tool (`get_weather`) beside MCP tools: server-everything
 * over stdio (`echo`, `get-sum`, ...) and the fault server as `counter` (its `pid`, seen as `c_pid`,
 * needs approval and records each call in `markFile`). `broken` names a server that exits at start.
 * With `hostedUrl` (server-everything over HTTP), `hosted` is an openai-responses agent whose service
 * (the emulator) calls that server itself (hosted MCP; `get-sum` asks for approval).
 */
export async function writeMcpConfig(dir: string, markFile: string, hostedUrl?: string): Promise<string> {
  const node = JSON.stringify(process.execPath);
  const file = path.join(dir, 'mcp.yaml');
  await writeFile(
    file,
    [
      'plugins:',
      '  openai: { apiKey: test, baseURL: "${OPENAI_BASE_URL}", maxRetries: 0 }',
      `  devui-tools: { module: ${JSON.stringify(TOOLS_PLUGIN)}, export: devuiToolsPlugin }`,
      '  mcp:',
      '    servers:',
      `      everything: { command: ${node}, args: [${JSON.stringify(EVERYTHING)}, stdio], allowTools: [echo, get-sum, get-tiny-image] }`,
      `      counter: { command: ${node}, args: [${JSON.stringify(FAULT_SERVER)}, normal], env: { MARK_FILE: ${JSON.stringify(markFile)} }, toolPrefix: c_, allowTools: [pid], requiresApproval: [pid] }`,
      `      dead: { command: ${node}, args: [${JSON.stringify(FAULT_SERVER)}, exit] }`,
      'agents:',
      '  helper: { client: openai-chat, model: gpt-4.1-mini, tools: [get_weather, mcp:everything, mcp:counter] }',
      '  broken: { client: openai-chat, model: gpt-4.1-mini, tools: [get_weather, mcp:dead] }',
      ...(hostedUrl
        ? [`  hosted: { client: openai-responses, model: gpt-4.1-mini, hostedMcp: [{ label: everything, url: ${JSON.stringify(hostedUrl)}, allowedTools: [echo, get-sum], requireApproval: { never: [echo] } }] }`]
        : []),
      '',
    ].join('\n'),
  );
  return file;
}
