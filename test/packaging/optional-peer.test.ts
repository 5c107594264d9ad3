import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigurationError, createContainer, loadPeer, packageName, requirePeers } from 'skein';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return expect.fail('expected it to throw');
}

describe('optional peer dependencies (requirePeers / loadPeer)', () => {
  it('passes when every peer is installed', () => {
    expect(() => requirePeers('skein/store-postgres', ['pg'])).not.to.throw();
    expect(() => requirePeers('skein/a2a', ['@a2a-js/sdk', 'express'])).not.to.throw();
  });

  it('names a missing peer and the npm install line in a ConfigurationError', () => {
    const error = thrown(() => requirePeers('skein/store-redis', ['skein-test-missing-peer']));
    expect(error).to.be.instanceOf(ConfigurationError);
    expect((error as Error).message).to.equal(
      'skein/store-redis needs the package "skein-test-missing-peer", which is not installed (skein lists it as an optional peer dependency). Install it: npm install skein-test-missing-peer',
    );
  });

  it('names every missing peer of an entry point in one error, and only the missing ones', () => {
    const error = thrown(() => requirePeers('skein/a2a', ['@skein-test/missing-a', 'express', 'skein-test-missing-b']));
    expect(error).to.be.instanceOf(ConfigurationError);
    expect((error as Error).message).to.include('needs the packages "@skein-test/missing-a" and "skein-test-missing-b"');
    expect((error as Error).message).to.match(/Install them: npm install @skein-test\/missing-a skein-test-missing-b$/);
  });

  it('loadPeer of a missing package (or subpath) is the same ConfigurationError, naming the package', () => {
    const error = thrown(() => loadPeer('skein/a2a', '@skein-test/missing/server/express'));
    expect(error).to.be.instanceOf(ConfigurationError);
    expect((error as Error).message).to.include('npm install @skein-test/missing');
    expect(packageName('@a2a-js/sdk/server/express')).to.equal('@a2a-js/sdk');
    expect(packageName('pg/lib/client')).to.equal('pg');
  });

  it('loadPeer gives the module instance an app importing the peer gets (ES module and CommonJS)', async () => {
    const esm = await import('@azure/ai-agents');
    expect(loadPeer<typeof esm>('skein/azure-ai-agents', '@azure/ai-agents').AgentsClient).to.equal(esm.AgentsClient);
    const cjs = await import('ioredis');
    const loaded = loadPeer<typeof cjs>('skein/store-redis', 'ioredis');
    expect(loaded.Redis).to.equal(cjs.Redis);
    expect(loaded.default).to.equal(cjs.default);
  });

  it('a config file naming a plugin whose peer is missing reports it with its path', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'skein-peer-'));
    try {
      const skein = pathToFileURL(path.resolve(import.meta.dirname, '../../src/index.js')).href;
      await writeFile(
        path.join(dir, 'needs-peer.mjs'),
        `import { requirePeers } from '${skein}';\nrequirePeers('needs-peer', ['skein-test-missing-peer']);\nexport default () => ({ id: 'needs-peer' });\n`,
      );
      await writeFile(path.join(dir, 'skein.yaml'), 'plugins:\n  extra:\n    module: ./needs-peer.mjs\nagents: {}\n');
      const error = await createContainer(path.join(dir, 'skein.yaml')).then(
        () => expect.fail('expected a ConfigurationError'),
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(ConfigurationError);
      const problems = (error as ConfigurationError).problems;
      expect(problems).to.have.length(1);
      expect(problems[0]).to.match(/^plugins\.extra\.module: cannot import "\.\/needs-peer\.mjs": needs-peer needs the package "skein-test-missing-peer"/);
      expect(problems[0]).to.include('npm install skein-test-missing-peer');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
