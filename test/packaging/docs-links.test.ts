/**
 * Every relative link of the README and the guides points to a file that exists, and every
 * `#anchor` to a heading of its page: moving a section must not leave a dead link behind.
 */
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const repo = resolve(import.meta.dirname, '../../..');

/** The markdown without fenced code blocks (a `# comment` in a shell block is no heading, a `](` in code no link). */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function headingAnchor(heading: string): string {
  return heading
    .trim()
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings, duplicates numbered as GitHub does (`a`, `a-1`, ...). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = headingAnchor(heading!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** The relative link targets of a page (web and mail addresses left out). */
function relativeLinks(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** What is wrong with one link of `page` (a path relative to the repo), or undefined when it resolves. */
function brokenLink(page: string, target: string): string | undefined {
  const [file, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = file === '' ? page : relative(repo, resolve(repo, dirname(page), decodeURIComponent(file)));
  if (!existsSync(join(repo, path))) return `${target}: no file ${path}`;
  if (anchor === undefined || !path.endsWith('.md')) return undefined;
  return anchors(readFileSync(join(repo, path), 'utf8')).has(anchor) ? undefined : `${target}: no heading "#${anchor}" in ${path}`;
}

const pages = ['README.md', ...readdirSync(join(repo, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

describe('links in README.md and docs/*.md', () => {
  it('computes the anchors GitHub gives headings', () => {
    expect(headingAnchor('Durability: what an acknowledged turn survives')).to.equal('durability-what-an-acknowledged-turn-survives');
    expect(headingAnchor('The `skein` command')).to.equal('the-skein-command');
    expect(headingAnchor('Per tenant or per request: child containers')).to.equal('per-tenant-or-per-request-child-containers');
    expect([...anchors('# A\n```sh\n# not a heading\n```\n## A\n')]).to.deep.equal(['a', 'a-1']);
  });

  it('finds the README and the guide index linking to the guides', () => {
    const readme = relativeLinks(readFileSync(join(repo, 'README.md'), 'utf8'));
    expect(readme).to.include.members(['docs/README.md', 'docs/getting-started.md', 'docs/stores.md']);
    expect(relativeLinks(readFileSync(join(repo, 'docs/README.md'), 'utf8'))).to.include.members(['getting-started.md', 'threads.md']);
  });

  it('reports a link to a missing file or heading', () => {
    expect(brokenLink('docs/README.md', 'no-such-guide.md')).to.equal('no-such-guide.md: no file docs/no-such-guide.md');
    expect(brokenLink('README.md', 'docs/stores.md#no-such-heading')).to.equal('docs/stores.md#no-such-heading: no heading "#no-such-heading" in docs/stores.md');
  });

  for (const page of pages) {
    it(`${page}: every relative link resolves`, () => {
      const markdown = readFileSync(join(repo, page), 'utf8');
      const broken = relativeLinks(markdown)
        .map((target) => brokenLink(page, target))
        .filter((problem) => problem !== undefined);
      expect(broken, `broken links in ${page}`).to.deep.equal([]);
    });
  }
});
