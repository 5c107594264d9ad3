import type { Contender } from './turns-bench.js';

export async function loadPeerContenders(_baseURL: string): Promise<{ contenders: Contender[]; notes: string[] }> {
  return { contenders: [], notes: ['not yet'] };
}
