/** RSS of a fresh process after importing Skein vs the openai SDK alone, each in its own child process. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { median } from './stats.js';

const run = promisify(execFile);
const probe = fileURLToPath(new URL('./import-probe.js', import.meta.url));

export interface ImportRssResult {
  /** Median RSS in MiB per module set. */
  nodeOnlyMiB: number;
  openaiMiB: number;
  skeinMiB: number;
  /** After also building a container with the OpenAI plugin (inversify loads then). */
  skeinWithContainerMiB: number;
  /** skein + skein/openai over openai alone. */
  ratio: number;
  /** Same, counting only what the imports add over a bare node process. */
  addedMiB: { openai: number; skein: number };
  samples: number;
}

async function rssOf(modules: string[]): Promise<number> {
  const { stdout } = await run(process.execPath, ['--expose-gc', probe, ...modules]);
  return (JSON.parse(stdout) as { rss: number }).rss / 2 ** 20;
}

export async function runImportRss(samples: number): Promise<ImportRssResult> {
  const bare: number[] = [];
  const openai: number[] = [];
  const skein: number[] = [];
  const withContainer: number[] = [];
  for (let i = 0; i < samples; i++) {
    bare.push(await rssOf([]));
    openai.push(await rssOf(['openai']));
    skein.push(await rssOf(['skein', 'skein/openai']));
    withContainer.push(await rssOf(['skein', 'skein/openai', '--container']));
  }
  const nodeOnlyMiB = median(bare);
  const openaiMiB = median(openai);
  const skeinMiB = median(skein);
  return {
    nodeOnlyMiB,
    openaiMiB,
    skeinMiB,
    skeinWithContainerMiB: median(withContainer),
    ratio: skeinMiB / openaiMiB,
    addedMiB: { openai: openaiMiB - nodeOnlyMiB, skein: skeinMiB - nodeOnlyMiB },
    samples,
  };
}
