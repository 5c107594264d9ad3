import { expect } from 'chai';
import { escapeHtml, renderMarkdown, safeUrl } from '../../src/devui/page/markdown.js';

/** Every tag name the renderer wrote. */
const tagsOf = (html: string) => [...html.matchAll(/<([a-z0-9]+)[\s>]/gi)].map((m) => m[1]!.toLowerCase());
const ALLOWED = new Set(['p', 'br', 'strong', 'em', 'code', 'pre', 'div', 'button', 'a', 'img', 'ul', 'ol', 'li', 'blockquote', 'h3', 'h4', 'h5', 'h6']);

describe('Dev UI Markdown renderer', () => {
  it('renders the common Markdown of model replies', () => {
    expect(renderMarkdown('Hello **bold** and *it* and `x < y`')).to.equal('<p>Hello <strong>bold</strong> and <em>it</em> and <code>x &lt; y</code></p>');
    expect(renderMarkdown('# Title\n- one\n- two\n\n1. first\n2. second')).to.equal('<h3>Title</h3>\n<ul><li>one</li><li>two</li></ul>\n<ol><li>first</li><li>second</li></ol>');
    expect(renderMarkdown('line one\nline two')).to.equal('<p>line one<br>\nline two</p>');
    expect(renderMarkdown('> quoted')).to.equal('<blockquote>quoted</blockquote>');
    expect(renderMarkdown('[docs](https://example.com/a_b_c?x=1&y=2)')).to.equal(
      '<p><a href="https://example.com/a_b_c?x=1&amp;y=2" target="_blank" rel="noopener noreferrer">docs</a></p>',
    );
    expect(renderMarkdown('![a cat](https://example.com/cat.png)')).to.equal('<p><img src="https://example.com/cat.png" alt="a cat" loading="lazy" referrerpolicy="no-referrer"></p>');
  });

  it('renders a fenced code block verbatim (no Markdown inside) with a Copy button', () => {
    const html = renderMarkdown('```ts\nconst a = **b** < c;\n```\nafter');
    expect(html).to.equal(
      '<div class="code-block" data-language="ts"><button type="button" class="copy-code" aria-label="Copy code">Copy</button><pre><code>const a = **b** &lt; c;</code></pre></div>\n<p>after</p>',
    );
  });

  it('shows raw HTML as text: script tags, event handlers and comments produce no tag', () => {
    const hostile = [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '<a href="javascript:alert(1)">x</a>',
      '<svg onload=alert(1)>',
      '<!-- --><iframe srcdoc="<script>alert(1)</script>">',
      '```\n</code></pre><script>alert(1)</script>\n```',
      '`</code><script>alert(1)</script>`',
    ];
    for (const text of hostile) {
      const html = renderMarkdown(text);
      expect(tagsOf(html).filter((t) => !ALLOWED.has(t)), text).to.deep.equal([]);
      expect(html, text).to.not.match(/<(script|iframe|svg)|<[^>]*\son\w+=/i);
    }
  });

  it('keeps javascript:, data: and other schemes out of links and images (they stay plain text)', () => {
    for (const url of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'java\tscript:alert(1)', 'vbscript:x', 'data:text/html;base64,PHNjcmlwdD4=', '//evil.example/x', 'data:image/svg+xml;base64,PHN2Zz4=']) {
      expect(renderMarkdown(`[click](${url})`), url).to.not.contain('<a ');
      expect(renderMarkdown(`![img](${url})`), url).to.not.contain('<img');
    }
    expect(safeUrl('data:image/png;base64,iVBORw0KGgo=', 'image')).to.equal('data:image/png;base64,iVBORw0KGgo=');
    expect(safeUrl('data:image/png;base64,iVBORw0KGgo=', 'link')).to.equal(undefined);
  });

  it('cannot break out of an attribute: quotes in link text, addresses and alt text are escaped', () => {
    const html = renderMarkdown('[x" onmouseover="alert(1)](https://e.com/"onmouseover="alert(1)) ![" onerror="alert(1)](https://e.com/i.png)');
    expect(html).to.not.match(/"\s*on\w+="/);
    // Only the attributes the renderer writes are present.
    const attributes = [...html.matchAll(/\s([a-z-]+)="/g)].map((m) => m[1]);
    expect(new Set(attributes)).to.deep.equal(new Set(['href', 'target', 'rel', 'src', 'alt', 'loading', 'referrerpolicy']));
    expect(escapeHtml(`<>&"'`)).to.equal('&lt;&gt;&amp;&quot;&#39;');
  });

  it('leaves underscores inside words alone (snake_case, window.__x)', () => {
    expect(renderMarkdown('call get_weather_now and window.__a or x.__b__c, but __strong__ and _em_')).to.equal(
      '<p>call get_weather_now and window.__a or x.__b__c, but <strong>strong</strong> and <em>em</em></p>',
    );
  });

  it('ignores the characters the renderer marks its placeholders with, so a message cannot forge one', () => {
    expect(renderMarkdown('a \uE0000\uE000 `b`')).to.equal('<p>a 0 <code>b</code></p>');
  });
});
