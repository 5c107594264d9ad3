import { expect } from 'chai';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliProcess, runSkein } from './cli-process.js';
import { useEmulator } from '../support/emulator.js';

const WEATHER_PLUGIN = fileURLToPath(new URL('./fixtures/weather-tool-plugin.js', import.meta.url));
const FILE_STORE_PLUGIN = fileURLToPath(new URL('./fixtures/file-store-plugin.js', import.meta.url));

interface SerializedFile {
  $type: string;
  provider: string;
  agent?: string;
  serviceThreadId?: string;
  store?: { messages: { role: string; contents: { kind: string; text?: string }[] }[] };
}

function texts(thread: SerializedFile): string[] {
  return (thread.store?.messages ?? []).flatMap((m) => m.contents.filter((c) => c.kind === 'text').map((c) => `${m.role}: ${c.text}`));
}

describe('skein CLI (the real process against the emulator)', function () {
  // Every test starts real node processes; a loaded machine needs more than the default.
  this.timeout(120_000);
  let dir: string;
  let config: string;

  const emu = useEmulator();
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'skein-cli-'));
    config = path.join(dir, 'skein.yaml');
    await writeFile(
      config,
      [
        'plugins:',
        `  openai: { apiKey: test, baseURL: "${emu.emulator.openaiBaseURL}", maxRetries: 0 }`,
        `  weather: { module: "${WEATHER_PLUGIN}", export: weatherToolPlugin, sky: Sunny }`,
        `  files: { module: "${FILE_STORE_PLUGIN}", export: fileStorePlugin, dir: "${path.join(dir, 'store')}" }`,
        'agents:',
        '  helper: { client: openai-chat, model: emu, tools: [get_weather, delete_file] }',
        '  keeper: { client: openai-responses, model: emu, conversation: true }',
        '  durable: { client: openai-chat, model: emu, messageStore: file-store }',
        '',
      ].join('\n'),
    );
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const chat = (...extra: string[]) => new CliProcess(['chat', '--config', config, '--agent', 'helper', ...extra], { cwd: dir });
  const skein = (args: string[], input?: string) => runSkein(args, { cwd: dir, input });

  describe('chat', () => {
    it('holds a multi-turn conversation, streaming replies, and saves the thread file after every turn', async () => {
      const threadFile = path.join(dir, 'ada.json');
      const cli = chat('--thread', threadFile);
      try {
        cli.send('My name is Ada');
        await cli.waitFor('helper: Nice to meet you, Ada!\n');
        // Lines run in order, so /thread answers once the turn before it is saved.
        cli.send('/thread');
        await cli.waitFor(`thread: file ${threadFile}`);
        const afterFirst = JSON.parse(await readFile(threadFile, 'utf8')) as SerializedFile;
        expect(texts(afterFirst)).to.deep.equal(['user: My name is Ada', 'assistant: Nice to meet you, Ada!']);

        cli.send("What's my name?");
        await cli.waitFor('helper: Your name is Ada.\n');
        cli.endInput();
        expect((await cli.exit()).code).to.equal(0);
      } finally {
        cli.kill();
      }
      const saved = JSON.parse(await readFile(threadFile, 'utf8')) as SerializedFile;
      expect(saved).to.include({ $type: 'in-memory', provider: 'openai-chat', agent: 'helper' });
      expect(texts(saved)).to.have.length(4);
      // Streamed: the reply reached the emulator as a streaming request.
      const bodies = emu.emulator.requestsTo('/v1/chat/completions').map((r) => r.body as { stream?: boolean });
      expect(bodies.at(-1)?.stream).to.equal(true);
    });

    it('resumes a thread file in a second process', async () => {
      const threadFile = path.join(dir, 'threads', 'bob.json');
      const first = await skein(['chat', '--config', config, '--agent', 'helper', '--thread', threadFile], 'My name is Bob\n');
      expect(first.code, first.stderr).to.equal(0);
      expect(first.stdout).to.contain('Nice to meet you, Bob!');

      const second = await skein(['chat', '--config', config, '--agent', 'helper', '--thread', threadFile], "What's my name?\n/thread\n");
      expect(second.code, second.stderr).to.equal(0);
      expect(second.stderr).to.contain('Resuming thread');
      expect(second.stdout).to.contain('helper: Your name is Bob.');
      expect(second.stdout).to.contain(`thread: file ${threadFile}`);
      const saved = JSON.parse(await readFile(threadFile, 'utf8')) as SerializedFile;
      expect(texts(saved)).to.deep.equal([
        'user: My name is Bob',
        'assistant: Nice to meet you, Bob!',
        "user: What's my name?",
        'assistant: Your name is Bob.',
      ]);
    });

    it('shows a tool call and its result on a line each (tool from a third-party plugin module)', async () => {
      const result = await skein(['chat', '--config', config, '--agent', 'helper', '--thread', 'weather-1'], 'call get_weather {"city":"Paris"}\n');
      expect(result.code, result.stderr).to.equal(0);
      const lines = result.stdout.split('\n');
      expect(lines).to.include('[tool call] get_weather {"city":"Paris"}');
      expect(lines).to.include('[tool result] get_weather: "Sunny in Paris"');
      expect(lines).to.include('helper: get_weather returned: Sunny in Paris');
      expect(lines.indexOf('[tool call] get_weather {"city":"Paris"}')).to.be.lessThan(lines.indexOf('[tool result] get_weather: "Sunny in Paris"'));
    });

    it('asks for approval of a tool marked requiresApproval and runs it after /approve', async () => {
      const cli = chat('--thread', 'approvals');
      try {
        cli.send('call delete_file {"path":"notes.txt"}');
        await cli.waitFor('[approval needed] delete_file {"path":"notes.txt"}');
        cli.send('/approve');
        await cli.waitFor('[tool result] delete_file: "deleted notes.txt"');
        await cli.waitFor('helper: delete_file returned: deleted notes.txt\n');
        cli.endInput();
        expect((await cli.exit()).code).to.equal(0);
      } finally {
        cli.kill();
      }
    });

    it('prints a service error with its type, keeps the thread unchanged and the chat alive', async () => {
      const threadFile = path.join(dir, 'faulty.json');
      const cli = chat('--thread', threadFile);
      try {
        cli.send('My name is Cy');
        await cli.waitFor('Nice to meet you, Cy!\n');
        emu.emulator.injectFault({ kind: 'status', status: 429, message: 'Slow down, please.', path: '/v1/chat/completions' });
        cli.send('this one fails');
        await cli.waitFor(/RateLimitError: .*Slow down, please\./, 'stderr');
        expect(cli.stderr).to.contain('The thread is unchanged');
        cli.send("What's my name?");
        await cli.waitFor('helper: Your name is Cy.\n');
        cli.endInput();
        expect((await cli.exit()).code).to.equal(0);
      } finally {
        cli.kill();
      }
      const saved = JSON.parse(await readFile(threadFile, 'utf8')) as SerializedFile;
      expect(texts(saved).join('\n')).not.to.contain('this one fails');
      expect(texts(saved)).to.have.length(4);
    });

    it('Ctrl-C during a streamed reply aborts that run and keeps the thread; Ctrl-C at the prompt exits with 130', async () => {
      const threadFile = path.join(dir, 'interrupt.json');
      const cli = chat('--thread', threadFile);
      try {
        cli.send('My name is Dee');
        await cli.waitFor('Nice to meet you, Dee!\n');
        cli.send('/thread');
        await cli.waitFor(`thread: file ${threadFile}`);
        const before = await readFile(threadFile, 'utf8');

        // The reply starts streaming, then the service stalls: only Ctrl-C ends it.
        emu.emulator.injectFault({ kind: 'stall-stream', afterEvents: 3, path: '/v1/chat/completions' });
        const aborted = emu.emulator.waitForAbortedStream();
        cli.send('please stall here');
        await cli.waitFor('helper: You said:');
        cli.child.kill('SIGINT');
        await cli.waitFor('(interrupted', 'stderr');
        await aborted;
        expect(await readFile(threadFile, 'utf8')).to.equal(before);

        cli.send("What's my name?");
        await cli.waitFor('helper: Your name is Dee.\n');
        cli.send('/help');
        await cli.waitFor('/exit');
        const saved = JSON.parse(await readFile(threadFile, 'utf8')) as SerializedFile;
        expect(texts(saved).join('\n')).not.to.contain('please stall here');
        expect(texts(saved)).to.have.length(4);

        cli.child.kill('SIGINT');
        expect((await cli.exit()).code).to.equal(130);
      } finally {
        cli.kill();
      }
    });

    it('runs the slash commands /help, /thread and /exit and rejects unknown ones', async () => {
      const result = await skein(['chat', '--config', config, '--agent', 'helper', '--thread', 'slashy'], '/help\n/nope\n/thread\n/exit\nnever sent\n');
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.contain('/exit');
      expect(result.stdout).to.contain(`thread: slashy (${path.join(dir, '.skein', 'threads', 'slashy.json')})`);
      expect(result.stderr).to.contain('Unknown command /nope');
      expect(result.stdout).not.to.contain('never sent');
    });

    it('refuses a thread of another agent with a clear error (exit 1)', async () => {
      const threadFile = path.join(dir, 'other.json');
      await writeFile(threadFile, JSON.stringify({ $type: 'in-memory', version: 1, provider: 'openai-chat', agent: 'someone-else', store: { messages: [] } }));
      const result = await skein(['chat', '--config', config, '--agent', 'helper', '--thread', threadFile], 'hi\n');
      expect(result.code).to.equal(1);
      expect(result.stderr).to.contain('Cannot resume the thread');
      expect(result.stderr).to.contain('ThreadCompatibilityError');
      expect(result.stderr).to.contain('someone-else');
    });
  });

  describe('threads', () => {
    it('lists registry threads newest first, shows one with every message, deletes after confirmation', async () => {
      const first = await skein(['chat', '--config', config, '--agent', 'helper', '--thread', 'older'], 'My name is Eve\n');
      expect(first.code, first.stderr).to.equal(0);
      const second = await skein(['chat', '--config', config, '--agent', 'helper', '--thread', 'newer'], 'call get_weather {"city":"Oslo"}\n');
      expect(second.code, second.stderr).to.equal(0);

      const list = await skein(['threads', 'list']);
      expect(list.code, list.stderr).to.equal(0);
      const rows = list.stdout.trim().split('\n');
      expect(rows[0]).to.match(/^ID\s+AGENT\s+PROVIDER\s+MESSAGES\s+UPDATED$/);
      expect(rows.slice(1).map((r) => r.split(/\s+/).slice(0, 4))).to.deep.equal([
        ['newer', 'helper', 'openai-chat', '4'],
        ['older', 'helper', 'openai-chat', '2'],
      ]);

      const show = await skein(['threads', 'show', 'newer']);
      expect(show.code, show.stderr).to.equal(0);
      expect(show.stdout).to.contain('messages: 4 (in-memory store)');
      expect(show.stdout).to.match(/#1 user \S+: call get_weather \{"city":"Oslo"\}/);
      expect(show.stdout).to.match(/#2 assistant \(helper\) \S+: \[tool call\] get_weather \{"city":"Oslo"\}/);
      expect(show.stdout).to.match(/#3 tool \S+: \[tool result\] get_weather: "Sunny in Oslo"/);
      expect(show.stdout).to.match(/#4 assistant \(helper\) \S+: get_weather returned: Sunny in Oslo/);

      const declined = await skein(['threads', 'delete', 'older'], 'n\n');
      expect(declined.code).to.equal(1);
      expect(declined.stderr).to.contain('Delete thread older');
      expect(await readdir(path.join(dir, '.skein', 'threads'))).to.include('older.json');

      const confirmed = await skein(['threads', 'delete', 'older'], 'y\n');
      expect(confirmed.code, confirmed.stderr).to.equal(0);
      const deleted = await skein(['threads', 'delete', 'newer', '--yes']);
      expect(deleted.code, deleted.stderr).to.equal(0);
      expect(await readdir(path.join(dir, '.skein', 'threads'))).to.deep.equal([]);

      const missing = await skein(['threads', 'show', 'older']);
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.contain('No thread "older"');
    });

    it('keeps a chat without --thread in the registry under a fresh id, and --threads-dir moves the registry', async () => {
      const result = await skein(['chat', '--config', config, '--agent', 'helper', '--threads-dir', 'elsewhere'], 'My name is Flo\n/thread\n');
      expect(result.code, result.stderr).to.equal(0);
      const id = /thread: (\S+) \(/.exec(result.stdout)?.[1];
      expect(id).to.be.a('string');
      const list = await skein(['threads', 'list', '--threads-dir', 'elsewhere', '--json']);
      const records = JSON.parse(list.stdout) as { id: string; agent: string; config: string }[];
      expect(records.map((r) => [r.id, r.agent, r.config])).to.deep.equal([[id, 'helper', config]]);
      const resumed = await skein(['chat', '--config', config, '--agent', 'helper', '--threads-dir', 'elsewhere', '--thread', id!], "What's my name?\n");
      expect(resumed.stdout).to.contain('Your name is Flo.');
    });

    it('deletes a service thread on the service too (agent and config recorded in the thread)', async () => {
      const made = await skein(['chat', '--config', config, '--agent', 'keeper', '--thread', 'svc'], 'My name is Gus\n');
      expect(made.code, made.stderr).to.equal(0);
      expect(made.stdout).to.contain('keeper: Nice to meet you, Gus!');
      const record = JSON.parse(await readFile(path.join(dir, '.skein', 'threads', 'svc.json'), 'utf8')) as { thread: SerializedFile };
      const conversation = record.thread.serviceThreadId!;
      expect(conversation).to.match(/^conv_/);

      const list = await skein(['threads', 'list']);
      expect(list.stdout).to.match(new RegExp(`svc\\s+keeper\\s+openai-responses\\s+service ${conversation}`));
      const show = await skein(['threads', 'show', 'svc']);
      expect(show.stdout).to.contain(`service thread: ${conversation}`);

      const deleted = await skein(['threads', 'delete', 'svc', '--yes']);
      expect(deleted.code, deleted.stderr).to.equal(0);
      expect(emu.emulator.requests.some((r) => r.method === 'DELETE' && r.path === `/v1/conversations/${conversation}`)).to.equal(true);
      expect(await readdir(path.join(dir, '.skein', 'threads'))).to.deep.equal([]);
    });

    it('with a durable message store keeps only the store key in the registry; show and delete go through the agent', async () => {
      const first = await skein(['chat', '--config', config, '--agent', 'durable', '--thread', 'dur'], 'My name is Hal\n');
      expect(first.code, first.stderr).to.equal(0);
      const record = JSON.parse(await readFile(path.join(dir, '.skein', 'threads', 'dur.json'), 'utf8')) as { thread: SerializedFile & { store: { key?: string } } };
      expect(record.thread.$type).to.equal('file-store');
      expect(Object.keys(record.thread.store)).to.deep.equal(['key']);
      const storeFile = path.join(dir, 'store', `${record.thread.store.key}.json`);
      expect(await readFile(storeFile, 'utf8')).to.contain('My name is Hal');

      const second = await skein(['chat', '--config', config, '--agent', 'durable', '--thread', 'dur'], "What's my name?\n");
      expect(second.stdout).to.contain('durable: Your name is Hal.');

      const list = await skein(['threads', 'list']);
      expect(list.stdout).to.match(/dur\s+durable\s+openai-chat\s+file-store store/);
      const show = await skein(['threads', 'show', 'dur']);
      expect(show.code, show.stderr).to.equal(0);
      expect(show.stdout).to.contain('messages: 4 (file-store store)');
      expect(show.stdout).to.match(/#4 assistant \(durable\) \S+: Your name is Hal\./);

      const deleted = await skein(['threads', 'delete', 'dur', '--yes']);
      expect(deleted.code, deleted.stderr).to.equal(0);
      expect(await readdir(path.join(dir, 'store'))).to.deep.equal([]);
      expect(await readdir(path.join(dir, '.skein', 'threads'))).to.deep.equal([]);
    });
  });

  describe('help, usage errors and config errors', () => {
    it('prints --help for skein and for every command (exit 0)', async () => {
      const main = await skein(['--help']);
      expect(main.code).to.equal(0);
      for (const name of ['chat', 'threads', 'emulator']) expect(main.stdout).to.contain(name);
      for (const name of ['chat', 'threads', 'emulator']) {
        const help = await skein([name, '--help']);
        expect(help.code, name).to.equal(0);
        expect(help.stdout).to.contain(`Usage: skein ${name}`);
      }
    });

    it('exits 2 with a clear message on unknown commands, flags and missing arguments', async () => {
      const cases: [string[], string][] = [
        [['frobnicate'], 'unknown command "frobnicate"'],
        [['--frob'], 'unknown option --frob'],
        [['chat', '--config', config, '--agent', 'helper', '--colour'], 'unknown option --colour'],
        [['chat', '--agent', 'helper'], 'missing --config'],
        [['chat', '--config'], 'option --config needs a value'],
        [['chat', '--config', config, '--agent', 'helper', '--thread', 'not an id'], 'neither a .json file nor a thread id'],
        [['threads'], 'missing subcommand'],
        [['threads', 'purge'], 'unknown subcommand "purge"'],
        [['threads', 'show'], 'needs a thread id'],
        [['emulator', '--port', 'eighty'], 'The port must be an integer'],
      ];
      for (const [args, message] of cases) {
        const result = await skein(args);
        expect(result.code, args.join(' ')).to.equal(2);
        expect(result.stderr, args.join(' ')).to.contain(message);
        expect(result.stderr, args.join(' ')).to.contain('--help" for usage');
      }
    });

    it('exits 1 listing every configuration problem', async () => {
      const bad = path.join(dir, 'bad.yaml');
      await writeFile(
        bad,
        [
          'plugins:',
          '  openai: { baseURL: 42 }',
          '  mystery: {}',
          'agents:',
          '  helper: { client: openai-chat, temperature: warm }',
          '  other: { client: nobody-provides-this }',
          '',
        ].join('\n'),
      );
      const result = await skein(['chat', '--config', bad, '--agent', 'helper'], 'hello\n');
      expect(result.code).to.equal(1);
      expect(result.stderr).to.contain('invalid configuration (4 problems)');
      expect(result.stderr).to.contain('  - plugins.openai.baseURL:');
      expect(result.stderr).to.contain('  - plugins.mystery: unknown plugin "mystery"');
      expect(result.stderr).to.contain('  - agents.helper.temperature:');
      expect(result.stderr).to.contain('  - agents.other.client: no loaded plugin provides client "nobody-provides-this"');
      expect(result.stdout).to.equal('');

      const unknownAgent = await skein(['chat', '--config', config, '--agent', 'ghost']);
      expect(unknownAgent.code).to.equal(1);
      expect(unknownAgent.stderr).to.contain('no agent named "ghost"; agents: helper, keeper, durable');
    });
  });

  describe('emulator', () => {
    it('starts the emulator, prints its base URL, serves it and stops on SIGTERM', async () => {
      const cli = new CliProcess(['emulator', '--port', '0'], { cwd: dir });
      try {
        await cli.waitFor(/OPENAI_BASE_URL=(http:\/\/127\.0\.0\.1:\d+\/v1)\n/);
        const baseURL = /OPENAI_BASE_URL=(\S+)/.exec(cli.stdout)![1]!;
        const response = await fetch(`${baseURL}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
          body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'ping' }] }),
        });
        const body = (await response.json()) as { choices: { message: { content: string } }[] };
        expect(body.choices[0]!.message.content).to.equal('You said: "ping" (I have seen 0 earlier messages.)');
        cli.child.kill('SIGTERM');
        expect((await cli.exit()).code).to.equal(0);
      } finally {
        cli.kill();
      }
    });
  });
});
