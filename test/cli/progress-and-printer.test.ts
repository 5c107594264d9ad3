import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { Progress } from '../../src/cli/progress.js';
import { ReplyPrinter } from '../../src/cli/reply-printer.js';

function capture(isTTY: boolean): { stream: PassThrough & { isTTY?: boolean }; text: () => string } {
  const stream = Object.assign(new PassThrough(), { isTTY });
  let text = '';
  stream.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  return { stream, text: () => text };
}

describe('CLI progress and reply printing', () => {
  it('draws a spinner on a terminal and erases it when the first token comes', async () => {
    const { stream, text } = capture(true);
    const progress = new Progress(stream);
    progress.start('thinking…');
    progress.stop();
    await new Promise((resolve) => setImmediate(resolve));
    expect(text()).to.contain('thinking…');
    expect(text().endsWith('\r\x1b[K')).to.equal(true);
  });

  it('writes nothing when the output is not a terminal (plain, pipe-friendly)', async () => {
    const { stream, text } = capture(false);
    const progress = new Progress(stream);
    progress.start('thinking…');
    progress.stop();
    await new Promise((resolve) => setImmediate(resolve));
    expect(text()).to.equal('');
  });

  it('prints text deltas on one labelled line and each tool call and result on its own line', async () => {
    const { stream, text } = capture(false);
    const printer = new ReplyPrinter(stream, 'bot');
    printer.print({ text: 'Let me ', contents: [{ kind: 'text', text: 'Let me ' }] });
    printer.print({ text: 'check.', contents: [{ kind: 'text', text: 'check.' }] });
    printer.print({ text: '', contents: [{ kind: 'function-call', callId: 'c1', name: 'lookup', arguments: '{"q":"x"}' }] });
    printer.print({ text: '', role: 'tool', contents: [{ kind: 'function-result', callId: 'c1', error: 'not\nfound' }] });
    printer.print({ text: 'Done.', contents: [{ kind: 'text', text: 'Done.' }] });
    printer.end();
    await new Promise((resolve) => setImmediate(resolve));
    expect(text()).to.equal('bot: Let me check.\n[tool call] lookup {"q":"x"}\n[tool error] lookup: not found\nbot: Done.\n');
  });
});
