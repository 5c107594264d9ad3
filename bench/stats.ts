/** Small statistics for benchmark samples. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The q-quantile (0..1), interpolating between the nearest samples. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low]! + (sorted[Math.min(low + 1, sorted.length - 1)]! - sorted[low]!) * (at - low);
}

export function mean(values: readonly number[]): number {
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

/** One timed sample: wall and CPU (user + system) microseconds. */
export interface Cost {
  wallUs: number;
  cpuUs: number;
}

/** Times `work`, counting the whole process's CPU (the server runs in another process). */
export async function timed(work: () => Promise<unknown>): Promise<Cost> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await work();
  const wallUs = (performance.now() - start) * 1000;
  const used = process.cpuUsage(cpu);
  return { wallUs, cpuUs: used.user + used.system };
}

export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
