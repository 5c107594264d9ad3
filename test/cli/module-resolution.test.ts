import { expect } from 'chai';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigurationError, agentToken, createContainer } from 'skein';
import { runSkein } from './cli-process.js';

// dist/test/cli/ -> the package root, which the app below links into its node_modules.
const SKEIN_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** A package as npm installs it: ESM only, entry points in `exports` (no `require` condition). */
async function writePackage(root: string, name: string, files: Record<string, string>, entry: { exports?: unknown; main?: string }): Promise<void> {
  const folder = path.join(root, 'node_modules', ...name.split('/'));
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, 'package.json'), JSON.stringify({ name, version: '1.0.0', type: 'module', ...entry }, undefined, 2));
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(folder, file)), { recursive: true });
    await writeFile(path.join(folder, file), text);
  }
}

/** A plugin module providing client `<id>-chat`, which answers with `greeting`. It imports only `skein`. */
function pluginSource(id: string, exportName: string): string {
  return `import { ChatClient, containerModule } from 'skein';
import { FakeChatClient } from 'skein/testing';
${exportName === 'default' ? 'export default function plugin' : `export function ${exportName}`}(settings) {
  const greeting = settings.greeting ?? 'Hello';
  const reply = () => ({ messages: [{ role: 'assistant', contents: [{ kind: 'text', text: greeting + ' from ${id}' }] }] });
  return {
    id: '${id}',
    clients: ['${id}-chat'],
    module: containerModule(({ bind }) => {
      bind(ChatClient).toDynamicValue(() => new FakeChatClient({ providerId: '${id}-chat', replies: Array.from({ length: 5 }, () => reply) })).inSingletonScope().whenNamed('${id}-chat');
    }),
  };
}
`;
}

/**
 * Issue 16 item 12: `module: some-package` resolves from the config file's folder (the app's
 * node_modules), not from where Skein is installed, so it works with Skein linked into the app.
 */
describe('config module: packages resolved from the config file\'s folder (Skein linked into an app outside the repo)', function () {
  this.timeout(120_000);
  let app: string;
  let config: string;

  before(async () => {
    app = await realpath(await mkdtemp(path.join(tmpdir(), 'skein-app-')));
    await mkdir(path.join(app, 'node_modules'), { recursive: true });
    // npm link / workspaces: the app's node_modules/skein is a symlink to Skein's own folder.
    await symlink(SKEIN_ROOT, path.join(app, 'node_modules', 'skein'), 'dir');
    await writePackage(app, 'acme-skein-plugin', { 'index.js': pluginSource('acme', 'acmePlugin'), 'extras/beta.js': pluginSource('beta', 'betaPlugin') }, {
      exports: { '.': { types: './index.d.ts', import: './index.js' }, './extras/*': { import: './extras/*.js' } },
    });
    await writePackage(app, '@acme/scoped-plugin', { 'lib/main.js': pluginSource('scoped', 'default') }, { exports: { import: './lib/main.js' } });
    // An older package: no "exports", its entry point in "main".
    await writePackage(app, 'legacy-skein-plugin', { 'lib/entry.js': pluginSource('legacy', 'legacyPlugin') }, { main: 'lib/entry' });
    await mkdir(path.join(app, 'config'), { recursive: true });
    config = path.join(app, 'config', 'skein.yaml');
    await writeFile(
      config,
      [
        'plugins:',
        '  acme: { module: acme-skein-plugin, export: acmePlugin, greeting: Howdy }',
        '  beta: { module: acme-skein-plugin/extras/beta, export: betaPlugin }',
        '  scoped: { module: "@acme/scoped-plugin" }',
        '  legacy: { module: legacy-skein-plugin, export: legacyPlugin }',
        'agents:',
        '  helper: { client: acme-chat }',
        '  second: { client: beta-chat }',
        '  third: { client: scoped-chat }',
        '  fourth: { client: legacy-chat }',
        '',
      ].join('\n'),
    );
  });
  after(async () => {
    await rm(app, { recursive: true, force: true });
  });

  it('skein chat run through the linked install loads a package plugin from the app (a folder above the config)', async () => {
    const linkedMain = path.join(app, 'node_modules', 'skein', 'dist', 'src', 'cli', 'main.js');
    const result = await runSkein(['chat', '--config', 'config/skein.yaml', '--agent', 'helper', '--thread', 'one.json'], { cwd: app, main: linkedMain, input: 'hi\n' });
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.contain('helper: Howdy from acme');
  });

  it('createContainer(file) resolves package names, "exports" subpath patterns, scoped packages and "main" from the file\'s folder', async () => {
    const container = await createContainer(config);
    expect((await container.get(agentToken('helper')).run('hi')).text).to.equal('Howdy from acme');
    expect((await container.get(agentToken('second')).run('hi')).text).to.equal('Hello from beta');
    expect((await container.get(agentToken('third')).run('hi')).text).to.equal('Hello from scoped');
    expect((await container.get(agentToken('fourth')).run('hi')).text).to.equal('Hello from legacy');
  });

  it('names the folder it searched when a package is not installed, and a subpath the package does not export', async () => {
    const bad = path.join(app, 'config', 'bad.yaml');
    // yaml is no plugin, and not in the app: found where Skein is installed, it fails as a plugin, not as an import.
    await writeFile(bad, 'plugins:\n  ghost: { module: ghost-plugin }\n  hidden: { module: acme-skein-plugin/private.js }\n  fallback: { module: yaml, export: stringify }\n');
    const error = await createContainer(bad).then(() => expect.fail('expected ConfigurationError'), (e: unknown) => e);
    expect(error).to.be.instanceOf(ConfigurationError);
    const [ghost, hidden, fallback] = (error as ConfigurationError).problems;
    expect((error as ConfigurationError).problems).to.have.length(3);
    expect(fallback).to.equal('plugins.fallback: "stringify" of "yaml" returned no plugin: expected a SkeinPlugin ({ id, module: ContainerModule }), e.g. openaiPlugin({ apiKey }).');
    expect(ghost).to.equal(
      `plugins.ghost.module: cannot import "ghost-plugin": no package "ghost-plugin" in node_modules of ${path.join(app, 'config')} (the config file's folder) or any folder above it, nor where Skein is installed. Install it in your app (npm install ghost-plugin) or give a path.`,
    );
    expect(hidden).to.match(/^plugins\.hidden\.module: cannot import "acme-skein-plugin\/private\.js": .*"exports" has no entry for "\.\/private\.js"/);
  });
});
