/**
 * The published package, checked as a new user meets it: `npm pack`, then a fresh app outside
 * the repo installs the tarball. Not part of `npm test` (it installs from the registry and takes
 * a minute or two); `.ci/run` runs it after the suites, and `npm run test:package` runs it alone.
 * It packs the current `dist/` (`npm run build` first; CI's `npm test` just built it).
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Emulator } from 'skein/testing';

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '../../..');

/** The optional peers, as the package declares them (the install line a user would type). */
async function declaredPeers(): Promise<Record<string, string>> {
  const manifest = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
  return manifest.peerDependencies;
}

async function npm(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** The first ```ts block of a markdown file in the repo, as a user would paste it. */
async function firstExample(file: string): Promise<string | undefined> {
  const text = await readFile(join(repo, file), 'utf8');
  return /```ts\n([\s\S]*?)```/.exec(text)?.[1];
}

/** The examples a newcomer pastes first: the README's, then the one without a container in the getting-started guide. */
async function firstExamples(): Promise<string[]> {
  const found = await Promise.all(['README.md', 'docs/getting-started.md'].map(firstExample));
  return found.filter((code): code is string => code !== undefined);
}

function tsconfig(module: 'nodenext' | 'bundler', files: string[], outDir?: string): string {
  return JSON.stringify({
    compilerOptions: {
      strict: true,
      target: 'es2022',
      module: module === 'nodenext' ? 'nodenext' : 'esnext',
      moduleResolution: module,
      skipLibCheck: false,
      types: ['node'],
      ...(outDir ? { outDir, rootDir: 'src' } : { noEmit: true }),
    },
    files,
  });
}

async function tsc(app: string, project: string): Promise<void> {
  try {
    await run(join(app, 'node_modules/.bin/tsc'), ['-p', project], { cwd: app });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`tsc -p ${project} failed in ${app}:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/** Packages in the app's tree whose install runs a script (npm's own record of it). */
async function packagesWithInstallScripts(app: string): Promise<string[]> {
  const lock = JSON.parse(await readFile(join(app, 'node_modules/.package-lock.json'), 'utf8')) as {
    packages: Record<string, { hasInstallScript?: boolean }>;
  };
  return Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript)
    .map(([path]) => path);
}

describe('the published package, installed from its tarball into a fresh app', function () {
  this.timeout(20 * 60_000);
  let work: string;
  let app: string;
  let emulator: Emulator;
  let examples: string[];

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'skein-pack-check-'));
    app = join(work, 'app');
    await mkdir(join(app, 'src'), { recursive: true });
    const packed = JSON.parse(await npm(repo, 'pack', '--ignore-scripts', '--json', '--pack-destination', work)) as { filename: string }[];
    const tarball = join(work, packed[0]!.filename);
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'skein-pack-check-app', private: true, type: 'module' }));
    // First exactly what an OpenAI-only app runs: the tarball, nothing else.
    await npm(app, 'install', tarball);
    examples = await firstExamples();
    emulator = await Emulator.start();
  });

  after(async () => {
    await emulator?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('installs for an OpenAI-only app without any install script and without the optional peers', async () => {
    expect(await packagesWithInstallScripts(app)).to.deep.equal([]);
    const lock = JSON.parse(await readFile(join(app, 'node_modules/.package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
    const installed = Object.keys(lock.packages).map((path) => path.replace(/^.*node_modules\//, ''));
    for (const peer of Object.keys(await declaredPeers())) expect(installed, `${peer} installed with skein`).not.to.include(peer);
  });

  it('ships a LICENSE, and source maps whose sources are inside them', async () => {
    const skein = join(app, 'node_modules/skein');
    expect(await readFile(join(skein, 'LICENSE'), 'utf8')).to.match(/^MIT License/);
    const map = JSON.parse(await readFile(join(skein, 'dist/src/agents/chat-agent.js.map'), 'utf8')) as { sourcesContent?: string[] };
    expect(map.sourcesContent?.[0]).to.include('class ChatAgent');
  });

  it('runs `npx skein --help`', async () => {
    const { stdout } = await run('npx', ['--no-install', 'skein', '--help'], { cwd: app });
    expect(stdout).to.match(/^Usage: skein <command>/);
  });

  it('rejects importing each entry point whose peer is missing with a ConfigurationError naming the npm install line', async () => {
    const expected: Record<string, string> = {
      'skein/store-redis': 'npm install ioredis',
      'skein/store-postgres': 'npm install pg',
      'skein/a2a': 'npm install @a2a-js/sdk express',
      'skein/azure-ai-agents': 'npm install @azure/ai-agents @azure/core-auth @azure/core-rest-pipeline',
      'skein/telemetry': 'npm install @opentelemetry/api',
      'skein/mcp': 'npm install @modelcontextprotocol/sdk',
      'skein/ag-ui': 'npm install @ag-ui/core @ag-ui/encoder',
      'skein/dbos': 'npm install @dbos-inc/dbos-sdk pg',
    };
    const probe = join(app, 'missing-peer.mjs');
    await writeFile(
      probe,
      `import { ConfigurationError } from 'skein';
const results = {};
for (const entry of ${JSON.stringify(Object.keys(expected))}) {
  try { await import(entry); results[entry] = 'imported'; }
  catch (error) { results[entry] = { configurationError: error instanceof ConfigurationError, message: error.message }; }
}
console.log(JSON.stringify(results));`,
    );
    const { stdout } = await run(process.execPath, [probe], { cwd: app });
    const results = JSON.parse(stdout) as Record<string, { configurationError: boolean; message: string }>;
    for (const [entry, line] of Object.entries(expected)) {
      expect(results[entry]?.configurationError, `${entry}: ${JSON.stringify(results[entry])}`).to.equal(true);
      expect(results[entry]!.message).to.match(new RegExp(`^${entry} needs the package`));
      expect(results[entry]!.message.endsWith(line), results[entry]!.message).to.equal(true);
    }
  });

  describe('the first examples of the README and the getting-started guide (pasted as they are)', () => {
    before(async () => {
      // What a TypeScript app adds: the compiler and Node's types (neither runs an install script).
      await npm(app, 'install', '--save-dev', 'typescript@5.9', '@types/node@22');
      for (const [i, code] of examples.entries()) await writeFile(join(app, `src/example-${i + 1}.ts`), code);
    });

    it('found both examples', () => {
      expect(examples).to.have.length(2);
      expect(examples[0]).to.include('createContainer');
      expect(examples[1]).to.include('new ChatAgent');
    });

    it('type-check under strict + nodenext with skipLibCheck false, and run against the emulator', async () => {
      const files = examples.map((_, i) => `src/example-${i + 1}.ts`);
      await writeFile(join(app, 'tsconfig.json'), tsconfig('nodenext', files, 'out'));
      await tsc(app, 'tsconfig.json');
      const env = { ...process.env, OPENAI_API_KEY: 'sk-pack-check', OPENAI_BASE_URL: emulator.openaiBaseURL };
      const first = await run(process.execPath, ['out/example-1.js'], { cwd: app, env });
      expect(first.stdout.length, 'the streamed reply').to.be.greaterThan(0);
      await run(process.execPath, ['out/example-2.js'], { cwd: app, env });
      expect(emulator.requestsTo('/v1/chat/completions').length, 'chat completions the first example made').to.equal(4);
    });

    it('type-check under strict + bundler resolution with skipLibCheck false', async () => {
      const files = examples.map((_, i) => `src/example-${i + 1}.ts`);
      await writeFile(join(app, 'tsconfig.bundler.json'), tsconfig('bundler', files));
      await tsc(app, 'tsconfig.bundler.json');
    });
  });

  describe('with every optional peer installed', () => {
    const entryPoints = ['skein', 'skein/openai', 'skein/testing', 'skein/telemetry', 'skein/store-sqlite', 'skein/store-redis', 'skein/store-postgres', 'skein/azure-ai-agents', 'skein/a2a', 'skein/mcp', 'skein/ag-ui', 'skein/dbos'];

    before(async () => {
      const peers = Object.entries(await declaredPeers()).map(([name, range]) => `${name}@${range}`);
      // Types and imports only: no native build of better-sqlite3 is needed to check them.
      // @types/pg too: pg ships no types, and the declarations of skein/dbos (and of the DBOS SDK
      // itself) and of the AG-UI PostgreSQL store name pg's types; an app checking libraries needs it.
      await npm(app, 'install', '--ignore-scripts', ...peers, '@types/pg@^8');
      const source = entryPoints.map((entry, i) => `import * as entry${i} from '${entry}';`).join('\n');
      await writeFile(join(app, 'src/entry-points.ts'), `${source}\nexport const all = [${entryPoints.map((_, i) => `entry${i}`).join(', ')}];\n`);
    });

    it('type-checks every entry point under strict + nodenext and bundler with skipLibCheck false', async () => {
      await writeFile(join(app, 'tsconfig.entries.json'), tsconfig('nodenext', ['src/entry-points.ts']));
      await tsc(app, 'tsconfig.entries.json');
      await writeFile(join(app, 'tsconfig.entries-bundler.json'), tsconfig('bundler', ['src/entry-points.ts']));
      await tsc(app, 'tsconfig.entries-bundler.json');
    });

    it('imports every entry point', async () => {
      const probe = join(app, 'import-all.mjs');
      await writeFile(probe, `${entryPoints.map((e) => `await import('${e}');`).join('\n')}\nconsole.log('ok');\n`);
      const { stdout } = await run(process.execPath, [probe], { cwd: app });
      expect(stdout.trim()).to.equal('ok');
    });
  });
});
