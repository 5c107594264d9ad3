import { expect } from 'chai';
import { canonicalJson, definitionFingerprint } from '../../src/agents/definition-fingerprint.js';

describe('definitionFingerprint', () => {
  it('ignores key order and undefined members, at every level', () => {
    const a = { model: 'gpt-4.1', tools: [{ type: 'code_interpreter', x: { b: 1, a: 2 } }], temperature: undefined };
    const b = { tools: [{ x: { a: 2, b: 1 }, type: 'code_interpreter' }], model: 'gpt-4.1' };
    expect(definitionFingerprint(a)).to.equal(definitionFingerprint(b));
    expect(canonicalJson(b)).to.equal('{"model":"gpt-4.1","tools":[{"type":"code_interpreter","x":{"a":2,"b":1}}]}');
  });

  it('changes when any value changes, including array order', () => {
    const base = { model: 'gpt-4.1', instructions: 'Be brief', tools: ['a', 'b'] };
    const seen = new Set([definitionFingerprint(base)]);
    seen.add(definitionFingerprint({ ...base, model: 'gpt-4o' }));
    seen.add(definitionFingerprint({ ...base, instructions: 'Be long' }));
    seen.add(definitionFingerprint({ ...base, tools: ['b', 'a'] }));
    expect(seen.size).to.equal(4);
    expect(definitionFingerprint(base)).to.match(/^[0-9a-f]{32}$/);
  });
});
