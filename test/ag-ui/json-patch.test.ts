import { expect } from 'chai';
import { jsonDiff } from 'skein/ag-ui';

describe('skein/ag-ui: jsonDiff (STATE_DELTA patches)', () => {
  it('adds, removes and replaces keys, recursing into objects, escaping ~ and / (RFC 6901)', () => {
    expect(jsonDiff({ a: 1, b: { c: [1], d: 'x' }, 'e/f~': true }, { a: 1, b: { c: [1, 2], g: null }, h: 2 })).to.deep.equal([
      { op: 'remove', path: '/e~1f~0' },
      { op: 'remove', path: '/b/d' },
      { op: 'replace', path: '/b/c', value: [1, 2] },
      { op: 'add', path: '/b/g', value: null },
      { op: 'add', path: '/h', value: 2 },
    ]);
  });

  it('is empty for equal documents and replaces the root when the kinds differ', () => {
    expect(jsonDiff({ x: [1, { y: 2 }] }, { x: [1, { y: 2 }] })).to.deep.equal([]);
    expect(jsonDiff({ x: 1 }, [1])).to.deep.equal([{ op: 'replace', path: '', value: [1] }]);
  });
});
