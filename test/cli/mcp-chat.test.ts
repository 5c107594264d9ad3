import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Emulator } from 'skein/testing';
import { EverythingHttp, FAULT_SERVER, marks } from '../mcp/mcp-fixtures.js';
import { runSkein } from './cli-process.js';

const WEATHER_PLUGIN = fileURLToPath(new URL('./fixtures/weather-tool-plugin.js', import.meta.url));
const WAITING = '[approval needed] c_pid {}: answer /approve or /reject [reason]';

/**
 * Issue 18: `skein chat` and `skein threads` show calls of MCP tools as they show local ones.
 * The real CLI process, the emulator as the model, server-everything over Streamable HTTP and
 * the fault server over stdio (its `pid` tool records each call in MARK_FILE: the count tests check).
 */
describe('skein chat with MCP tools (the real process, server-everything and a stdio server)', function () {
  this.timeout(120_000);
  let emulator: Emulator;
  let everything: EverythingHttp;
  let dir: string;
  let config: string;
  let markFile: string;

  before(async () => {
    [emulator, everything] = await Promise.all([Emulator.start(), EverythingHttp.start()]);
  });
  after(async () => {
    await Promise.all([emulator.stop(), everything.stop()]);
  });
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'skein-cli-mcp-'));
    config = path.join(dir, 'skein.yaml');
    markFile = path.join(dir, 'marks');
    await writeFile(
      config,
      [
        'plugins:',
        `  openai: { apiKey: test, baseURL: "${emulator.openaiBaseURL}", maxRetries: 0 }`,
        `  weather: { module: "${WEATHER_PLUGIN}", export: weatherToolPlugin, sky: Sunny }`,
        '  mcp:',
        '    servers:',
        `      everything: { url: "${everything.url}" }`,
        `      counter: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(FAULT_SERVER)}, normal], env: { MARK_FILE: ${JSON.stringify(markFile)} }, toolPrefix: c_, requiresApproval: [pid] }`,
        `      dead: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(FAULT_SERVER)}, exit] }`,
        'agents:',
        '  helper: { client: openai-chat, model: emu, tools: [get_weather, "mcp:everything/echo", "mcp:everything/get-sum", mcp:counter] }',
        '  broken: { client: openai-chat, model: emu, tools: [get_weather, mcp:dead] }',
        // Hosted MCP: the service (the emulator) calls server-everything itself; the CLI only shows what it did.
        `  hosted: { client: openai-responses, model: emu, hostedMcp: [{ label: everything, url: "${everything.url}", allowedTools: [echo, get-sum], requireApproval: { never: [echo] } }] }`,
        '',
      ].join('\n'),
    );
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const chat = (thread: string, input: string, agent = 'helper') => runSkein(['chat', '--config', config, '--agent', agent, '--thread', thread], { cwd: dir, input });
  /** How many times the counter server really ran `pid`. */
  const pidCalls = async () => (await marks(markFile)).filter((m) => m === 'call pid').length;

  it('shows an MCP call, its result and a server-side error like a local call; threads show lists them and the pending MCP call', async () => {
    const first = await chat('mcp-1', ['call get_weather {"city":"Oslo"}', 'call echo {"message":"over MCP"}', 'call get-sum {"a":"two","b":2}', 'call c_pid'].join('\n') + '\n');
    expect(first.code, first.stderr).to.equal(0);
    const lines = first.stdout.split('\n');
    // A local call and an MCP call print the same three lines: the call, the result, the reply.
    expect(lines).to.include.members([
      '[tool call] get_weather {"city":"Oslo"}',
      '[tool result] get_weather: "Sunny in Oslo"',
      'helper: get_weather returned: Sunny in Oslo',
      '[tool call] echo {"message":"over MCP"}',
      '[tool result] echo: "Echo: over MCP"',
      'helper: echo returned: Echo: over MCP',
      '[tool call] get-sum {"a":"two","b":2}',
      '[tool call] c_pid {}',
      WAITING,
    ]);
    // The server refused the arguments: an error result, as a local tool's failure prints.
    expect(lines.find((l) => l.startsWith('[tool error] get-sum: '))).to.match(/expected number/);
    expect(await pidCalls()).to.equal(0);

    const show = await runSkein(['threads', 'show', 'mcp-1'], { cwd: dir });
    expect(show.code, show.stderr).to.equal(0);
    expect(show.stdout).to.match(/#\d+ assistant \(helper\)( \S+)?: \[tool call\] echo \{"message":"over MCP"\}/);
    expect(show.stdout).to.match(/#\d+ tool \S+: \[tool result\] echo: "Echo: over MCP"/);
    expect(show.stdout).to.match(/\[tool error\] get-sum: .*expected number/);
    expect(show.stdout).to.contain('waiting for approval: c_pid {} (answer in "skein chat" with /approve or /reject)');
  });

  it('stops at an MCP tool that requires approval; a new process on the thread file shows it and /approve runs it exactly once', async () => {
    const threadFile = path.join(dir, 'pending.json');
    const first = await chat(threadFile, 'call c_pid\n');
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.contain('[tool call] c_pid {}\n' + WAITING);
    expect(await pidCalls()).to.equal(0);

    const second = await chat(threadFile, '/approve\n');
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stderr).to.contain('This thread is waiting for your approval of a tool call:');
    const lines = second.stdout.split('\n');
    expect(lines[0]).to.equal(WAITING);
    const result = lines.find((l) => l.startsWith('[tool result] c_pid: '));
    expect(result).to.match(/^\[tool result\] c_pid: "\d+"$/);
    expect(lines.find((l) => l.startsWith('helper: '))).to.match(/^helper: c_pid returned: \d+$/);
    expect(await pidCalls()).to.equal(1);

    const third = await chat(threadFile, '/approve\n');
    expect(third.code, third.stderr).to.equal(0);
    expect(third.stdout).not.to.contain('[approval needed]');
    expect(third.stderr).to.contain('No tool call is waiting for approval.');
    expect(await pidCalls()).to.equal(1);
  });

  it('/reject answers a pending MCP call without calling the server', async () => {
    const threadFile = path.join(dir, 'rejected.json');
    await chat(threadFile, 'call c_pid\n');
    const second = await chat(threadFile, '/reject not now\n');
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stdout).to.contain('[tool error] c_pid: not run: the user rejected this call: not now');
    expect(await pidCalls()).to.equal(0);
  });

  it('shows the calls the service made on a hosted MCP server as tool calls and results naming the server; its approval request is answered in a new process', async () => {
    const first = await chat('hosted-1', 'call echo {"message":"hosted"}\ncall get-sum {"a":19,"b":23}\n', 'hosted');
    expect(first.code, first.stderr).to.equal(0);
    const lines = first.stdout.split('\n');
    expect(lines.slice(0, 4)).to.deep.equal([
      '[tool call] echo {"message":"hosted"} (MCP server "everything", called by the service)',
      '[tool result] echo: "Echo: hosted"',
      'hosted: echo returned: Echo: hosted',
      '[approval needed] get-sum {"a":19,"b":23}: answer /approve or /reject [reason]',
    ]);

    const second = await chat('hosted-1', '/approve\n', 'hosted');
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stdout.split('\n')).to.include.members([
      '[tool call] get-sum {"a":19,"b":23} (MCP server "everything", called by the service)',
      '[tool result] get-sum: "The sum of 19 and 23 is 42."',
      'hosted: get-sum returned: The sum of 19 and 23 is 42.',
    ]);

    const show = await runSkein(['threads', 'show', 'hosted-1'], { cwd: dir });
    expect(show.code, show.stderr).to.equal(0);
    expect(show.stdout).to.contain('    [MCP tools listed by the service] everything: echo, get-sum\n');
    expect(show.stdout).to.contain('    [tool call] echo {"message":"hosted"} (MCP server "everything", called by the service)\n    [tool result] echo: "Echo: hosted"\n');
    expect(show.stdout).to.contain('    [tool result] get-sum: "The sum of 19 and 23 is 42."\n');
    expect(show.stdout).not.to.match(/\[hosted-mcp-/);
  });

  it('a server that cannot start is an McpConnectionError naming it; the thread is unchanged and the chat goes on', async () => {
    const result = await chat('broken-1', 'hello\ncall get_weather {"city":"Rome"}\n', 'broken');
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stderr).to.contain(`McpConnectionError: MCP server "dead" (${process.execPath} ${FAULT_SERVER} exit): failed while connecting`);
    expect(result.stderr).to.contain('MISSING_SETTING is not set');
    expect(result.stderr).to.contain('The thread is unchanged; you can try again.');
    // Every run lists the server's tools first, so the local tool cannot run either; no turn completed, nothing is saved.
    expect(result.stdout).not.to.contain('[tool call]');
    const show = await runSkein(['threads', 'show', 'broken-1'], { cwd: dir });
    expect(show.code).to.equal(1);
    expect(show.stderr).to.contain('No thread "broken-1"');
  });
});
