/**
 * A small Markdown renderer for the Dev UI's messages, served to the page as /markdown.js.
 *
 * Safe by construction: the whole text is HTML-escaped first, and only the tags this file writes
 * are ever produced, so raw HTML in a message (`<script>`, `<img onerror>`) shows as text. Link
 * and image addresses pass an allowlist of schemes (http, https, mailto; images also
 * `data:image/...` in raster formats), anything else stays plain text; every link opens in a new
 * tab with `rel="noopener noreferrer"`.
 *
 * Supported: paragraphs (a single newline is a line break, as in chat), `#` headings, `-`/`*`/`1.`
 * lists, `>` quotes, fenced code blocks (with a Copy button), inline `code`, **bold**, *italic*,
 * [links](https://...) and ![images](https://...).
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes every character that means something in HTML text or in a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const LINK_SCHEME = /^(?:https?:\/\/|mailto:)/i;
const IMAGE_SCHEME = /^(?:https?:\/\/|data:image\/(?:png|jpeg|gif|webp);base64,[a-z0-9+/=]+$)/i;

/** An address from escaped text, if its scheme is allowed; undefined otherwise. */
export function safeUrl(escapedUrl: string, kind: 'link' | 'image'): string | undefined {
  // Controls and spaces never belong in an address; browsers strip some of them (`java\tscript:`).
  if ([...escapedUrl].some((c) => c <= ' ' || c === '\u007f')) return undefined;
  return (kind === 'link' ? LINK_SCHEME : IMAGE_SCHEME).test(escapedUrl) ? escapedUrl : undefined;
}

/** Renders Markdown as HTML that holds only the tags written here. */
export function renderMarkdown(markdown: string): string {
  const lines = escapeHtml(markdown.replace(/\r\n?/g, '\n')).split('\n');
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const fence = /^\s*(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (fence) {
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i]!.trim().startsWith(fence[1]!); i++) code.push(lines[i]!);
      i++;
      out.push(codeBlock(code.join('\n'), fence[2] ?? ''));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const level = Math.min(heading[1]!.length + 2, 6);
      out.push(`<h${level}>${inline(heading[2]!)}</h${level}>`);
      i++;
      continue;
    }
    if (/^\s*(?:[-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const items: string[] = [];
      for (; i < lines.length && /^\s*(?:[-*+]|\d+[.)])\s+/.test(lines[i]!); i++) items.push(`<li>${inline(lines[i]!.replace(/^\s*(?:[-*+]|\d+[.)])\s+/, ''))}</li>`);
      out.push(ordered ? `<ol>${items.join('')}</ol>` : `<ul>${items.join('')}</ul>`);
      continue;
    }
    if (/^&gt;\s?/.test(line)) {
      const quoted: string[] = [];
      for (; i < lines.length && /^&gt;\s?/.test(lines[i]!); i++) quoted.push(lines[i]!.replace(/^&gt;\s?/, ''));
      out.push(`<blockquote>${quoted.map(inline).join('<br>\n')}</blockquote>`);
      continue;
    }
    if (!line.trim()) {
      i++;
      continue;
    }
    const paragraph: string[] = [];
    for (; i < lines.length && lines[i]!.trim() && !startsBlock(lines[i]!); i++) paragraph.push(lines[i]!);
    out.push(`<p>${paragraph.map(inline).join('<br>\n')}</p>`);
  }
  return out.join('\n');
}

function startsBlock(line: string): boolean {
  return /^\s*(?:`{3,}|~{3,})/.test(line) || /^#{1,6}\s/.test(line) || /^\s*(?:[-*+]|\d+[.)])\s+/.test(line) || /^&gt;/.test(line);
}

function codeBlock(escapedCode: string, language: string): string {
  const label = language ? ` data-language="${language}"` : '';
  return `<div class="code-block"${label}><button type="button" class="copy-code" aria-label="Copy code">Copy</button><pre><code>${escapedCode}</code></pre></div>`;
}

/** Inline spans of one escaped line: code first (its contents are not Markdown), then images, links, emphasis. */
function inline(escaped: string): string {
  // Finished HTML goes into numbered slots, so later rules never rewrite inside a tag or an address.
  // A private-use character marks a slot: it is removed from the text first, so only our slots carry it.
  const slots: string[] = [];
  const slot = (html: string) => `\uE000${slots.push(html) - 1}\uE000`;
  let text = escaped.replace(/\uE000/g, '').replace(/`([^`]+)`/g, (_m, code: string) => slot(`<code>${code}</code>`));
  text = text.replace(/!\[([^\]]*)\]\(([^)\s]+)\)/g, (whole, alt: string, url: string) => {
    const src = safeUrl(url, 'image');
    return src ? slot(`<img src="${src}" alt="${alt}" loading="lazy" referrerpolicy="no-referrer">`) : whole;
  });
  text = text.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (whole, label: string, url: string) => {
    const href = safeUrl(url, 'link');
    return href ? slot(`<a href="${href}" target="_blank" rel="noopener noreferrer">${emphasis(label)}</a>`) : whole;
  });
  return emphasis(text).replace(/\uE000(\d+)\uE000/g, (_m, n: string) => slots[Number(n)]!);
}

function emphasis(text: string): string {
  return text
    .replace(/\*\*(?=\S)(.+?)\*\*/g, '<strong>$1</strong>')
    // Underscores inside words (snake_case, window.__x) are not emphasis, as in CommonMark.
    .replace(/(^|[\s([;])__(?=\S)(.*?\S)__(?!\w)/g, '$1<strong>$2</strong>')
    .replace(/(^|[^*\w])\*(?=\S)([^*]+?)\*(?!\w)/g, '$1<em>$2</em>')
    .replace(/(^|[\s([;])_(?=\S)([^_]*?\S)_(?!\w)/g, '$1<em>$2</em>');
}
