#!/usr/bin/env node
// Install cost in a fresh app with an empty npm cache: packages, node_modules size, wall time,
// and packages with an install script, for `openai` alone, `@openai/agents` alone and Skein
// from its tarball (`npm pack` of the current dist/). Prints a markdown table for
// docs/performance.md. Usage: npm run build && node scripts/measure-install.mjs
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import process from 'node:process';

const print = (line) => process.stdout.write(`${line}\n`);
const repo = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'skein-install-'));

function npm(cwd, args) {
  return execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
}

/** Bytes on disk under `dir` (files' sizes; symlinks not followed). */
function sizeOf(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += sizeOf(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

function measure(label, spec) {
  const app = mkdtempSync(join(work, 'app-'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'install-measure', private: true, type: 'module' }));
  const cache = mkdtempSync(join(work, 'cache-'));
  const start = process.hrtime.bigint();
  npm(app, ['install', '--cache', cache, spec]);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const lock = JSON.parse(readFileSync(join(app, 'node_modules/.package-lock.json'), 'utf8'));
  const packages = Object.keys(lock.packages).filter((path) => path.includes('node_modules/'));
  const scripts = packages.filter((path) => lock.packages[path].hasInstallScript);
  const mb = sizeOf(join(app, 'node_modules')) / 1e6;
  rmSync(cache, { recursive: true, force: true });
  return { label, packages: packages.length, mb, seconds, scripts };
}

const packed = JSON.parse(npm(repo, ['pack', '--ignore-scripts', '--json', '--pack-destination', work]));
const tarball = join(work, packed[0].filename);
const rows = [measure('`openai` alone', 'openai'), measure('`@openai/agents` alone', '@openai/agents'), measure('`skein` (tarball)', tarball)];
print('| install into a fresh app (empty cache) | packages | node_modules | time | install scripts |');
print('|---|---|---|---|---|');
for (const r of rows) print(`| ${r.label} | ${r.packages} | ${r.mb.toFixed(1)} MB | ${r.seconds.toFixed(1)} s | ${r.scripts.length ? r.scripts.join(', ') : 'none'} |`);
rmSync(work, { recursive: true, force: true });
