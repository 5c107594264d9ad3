/** The ratio table, the JSON results and a hand-written SVG bar chart of them. */

export interface Check {
  /** What is compared, e.g. "agent.run wall / openai SDK". */
  metric: string;
  value: number;
  /** The target the value must not exceed; none for informational rows. */
  target?: number;
  /** Unit shown after the value: `x` for ratios. */
  unit: string;
  pass?: boolean;
  note?: string;
}

export function check(metric: string, value: number, target: number | undefined, note?: string, unit = 'x'): Check {
  const row: Check = { metric, value, unit };
  if (target !== undefined) {
    row.target = target;
    row.pass = value <= target;
  }
  if (note) row.note = note;
  return row;
}

export function formatTable(checks: readonly Check[]): string {
  const rows = checks.map((c) => [
    c.metric,
    `${c.value.toFixed(c.unit === 'x' ? 3 : 1)}${c.unit === 'x' ? 'x' : ` ${c.unit}`}`,
    c.target === undefined ? '' : `<= ${c.target}${c.unit === 'x' ? 'x' : ` ${c.unit}`}`,
    c.pass === undefined ? 'info' : c.pass ? 'PASS' : 'FAIL',
    c.note ?? '',
  ]);
  const header = ['metric', 'value', 'target', 'result', 'note'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Horizontal bars of every ratio row, a tick at its target, green when it passes. */
export function renderSvg(checks: readonly Check[], title: string): string {
  const bars = checks.filter((c) => c.unit === 'x');
  const left = 330;
  const width = 860;
  const plot = width - left - 70;
  const rowHeight = 26;
  const top = 48;
  const height = top + bars.length * rowHeight + 40;
  const max = Math.max(2, ...bars.map((c) => Math.max(c.value, c.target ?? 0))) * 1.05;
  const x = (v: number) => left + (v / max) * plot;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escape(title)}</text>`,
    `<text x="${width / 2}" y="38" text-anchor="middle" fill="#555">ratio (lower is better); black tick = target; grey line = 1.0x</text>`,
  ];
  out.push(`<line x1="${x(1)}" y1="${top - 4}" x2="${x(1)}" y2="${top + bars.length * rowHeight}" stroke="#999" stroke-dasharray="3,3"/>`);
  bars.forEach((c, i) => {
    const y = top + i * rowHeight;
    const color = c.pass === undefined ? '#7f8c8d' : c.pass ? '#2e8b57' : '#c0392b';
    out.push(`<text x="${left - 8}" y="${y + 15}" text-anchor="end">${escape(c.metric)}</text>`);
    out.push(`<rect x="${left}" y="${y + 4}" width="${Math.max(1, x(c.value) - left).toFixed(1)}" height="${rowHeight - 10}" fill="${color}"/>`);
    out.push(`<text x="${(x(c.value) + 4).toFixed(1)}" y="${y + 15}">${c.value.toFixed(2)}x</text>`);
    if (c.target !== undefined) {
      out.push(`<line x1="${x(c.target).toFixed(1)}" y1="${y + 1}" x2="${x(c.target).toFixed(1)}" y2="${y + rowHeight - 3}" stroke="#000" stroke-width="2"/>`);
    }
  });
  const axisY = top + bars.length * rowHeight + 6;
  out.push(`<line x1="${left}" y1="${axisY}" x2="${left + plot}" y2="${axisY}" stroke="#333"/>`);
  for (let v = 0; v <= max; v += max > 4 ? 1 : 0.5) {
    out.push(`<line x1="${x(v).toFixed(1)}" y1="${axisY}" x2="${x(v).toFixed(1)}" y2="${axisY + 4}" stroke="#333"/>`);
    out.push(`<text x="${x(v).toFixed(1)}" y="${axisY + 16}" text-anchor="middle">${v}x</text>`);
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}
