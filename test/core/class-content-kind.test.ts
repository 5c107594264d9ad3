import { expect } from 'chai';
import { ClassContentKindSerializer, SerializationError, SerializationRegistryImpl, type AIContent } from 'skein';

/** A plugin's own content kind, modelled as a class with behaviour. */
class GeoPoint {
  readonly kind = 'text' as const; // typed as an existing kind so it fits AIContent without augmentation in this test
  text = '';
  lat = 0;
  lon = 0;
  describe(): string {
    return `${this.lat},${this.lon}`;
  }
}

describe('ClassContentKindSerializer (class-transformer behind the registry)', () => {
  it('builds class instances only from checked data, leaving the input untouched', () => {
    const registry = new SerializationRegistryImpl();
    registry.registerContentKind(
      new ClassContentKindSerializer('text', GeoPoint as unknown as new () => AIContent & GeoPoint, {
        required: { text: 'string', lat: 'number', lon: 'number' },
      }),
    );
    const input = { role: 'user', contents: [{ kind: 'text', text: 'here', lat: 1.5, lon: -2 }] };
    const before = JSON.stringify(input);
    const messages = registry.readMessages([JSON.parse(before)], "$");
    expect(messages[0]!.contents).to.have.length(1);
    expect(JSON.stringify(input)).to.equal(before);
    expect(() => registry.readMessage({ role: 'user', contents: [{ kind: 'text', text: 'here', lat: 'north', lon: 0 }] })).to.throw(
      SerializationError,
      /contents\[0\]\.lat/,
    );
  });
});

describe('ClassContentKindSerializer instances', () => {
  it('come back as instances of the class', () => {
    const registry = new SerializationRegistryImpl();
    registry.registerContentKind(
      new ClassContentKindSerializer('text', GeoPoint as unknown as new () => AIContent & GeoPoint, {
        required: { text: 'string', lat: 'number', lon: 'number' },
      }),
    );
    const [message] = registry.readMessages([{ role: 'user', contents: [{ kind: 'text', text: 'here', lat: 1.5, lon: -2 }] }], '$');
    const point = message!.contents[0] as unknown as GeoPoint;
    expect(point).to.be.instanceOf(GeoPoint);
    expect(point.describe()).to.equal('1.5,-2');
  });
});
