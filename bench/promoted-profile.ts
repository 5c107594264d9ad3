/**
 * Where the scale bench's peak comes from:
 *   node --expose-gc dist/bench/promoted-profile.js ["Skein runStream" | "openai SDK stream"] [--top 40] [--conversations 1000]
 * One contender runs the scale bench's phases (warm-up, idle threads, then all conversations x 3
 * turns at once) with V8's sampling heap profiler on during the burst, keeping only objects that
 * outlived a scavenge (promoted, or still alive at the end): the peak RSS per active run is made of
 * those. Prints bytes per turn by the function that allocated them (self, not callees). Run it for
 * both contenders and compare: a function only one list has is that contender's own cost.
 */
import { Session } from 'node:inspector/promises';
import { isEntryPoint, runMain } from './bench-main.js';
import { startFixedReplyServer } from './fixed-reply-server.js';
import { CONTENDERS, converse } from './scale-bench.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children: ProfileNode[];
}
interface SamplingProfile {
  head: ProfileNode;
  samples: { size: number; nodeId: number }[];
}

/** Bytes by allocating function ("name file:line"), summed over the samples. */
export function bytesBySite(profile: SamplingProfile): Map<string, number> {
  const nodes = new Map<number, ProfileNode>();
  const visit = (node: ProfileNode): void => {
    nodes.set(node.id, node);
    node.children.forEach(visit);
  };
  visit(profile.head);
  const sites = new Map<string, number>();
  for (const sample of profile.samples) {
    const frame = nodes.get(sample.nodeId)!.callFrame;
    const site = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`;
    sites.set(site, (sites.get(site) ?? 0) + sample.size);
  }
  return sites;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
  const name = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')) ?? 'Skein runStream';
  const make = CONTENDERS[name];
  if (!make) throw new Error(`promoted-profile.js: no contender "${name}"; expected ${Object.keys(CONTENDERS).join(' or ')}`);
  if (!(globalThis as { gc?: () => void }).gc) throw new Error('promoted-profile.js: run with node --expose-gc');
  const conversations = flag('--conversations', 1000);
  const turns = 3;
  const server = await startFixedReplyServer();
  try {
    const contender = make(server.baseURL);
    await converse(contender, 50, turns, 10);
    const idle = await converse(contender, conversations, turns, 10);
    for (let i = 0; i < 3; i++) (globalThis as unknown as { gc: () => void }).gc();
    const session = new Session();
    session.connect();
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMinorGC: false, includeObjectsCollectedByMajorGC: true });
    await converse(contender, conversations, turns);
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: SamplingProfile };
    session.disconnect();
    const sites = [...bytesBySite(profile)].sort((a, b) => b[1] - a[1]);
    const perTurn = (bytes: number) => (bytes / (conversations * turns)).toFixed(0).padStart(7);
    console.log(`${name}: bytes per turn that outlived a scavenge, by allocating function (${idle.length} idle threads held)`);
    console.log(`${perTurn(sites.reduce((sum, [, bytes]) => sum + bytes, 0))} in all`);
    for (const [site, bytes] of sites.slice(0, flag('--top', 40))) console.log(`${perTurn(bytes)} ${site}`);
  } finally {
    await server.stop();
  }
}

if (isEntryPoint(import.meta.url)) runMain(main);
