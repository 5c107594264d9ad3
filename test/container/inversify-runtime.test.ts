import { expect } from 'chai';
import { Container, ContainerModule } from 'inversify';
import { ConfigurationError, containerModule, createContainer } from 'skein';
import { loadInversify } from '../../src/container/inversify-runtime.js';

describe('container: inversify loaded on first use', () => {
  it('builds the same ContainerModule and Container classes the app imports from inversify', () => {
    expect(containerModule(() => {})).to.be.instanceOf(ContainerModule);
    expect(createContainer({})).to.be.instanceOf(Container);
  });

  it('accepts a plugin module built with inversify directly, and one built with containerModule', () => {
    const direct = { id: 'direct', module: new ContainerModule(({ bind }) => {
        bind('direct').toConstantValue(1);
      }) };
    const lazy = { id: 'lazy', module: containerModule(({ bind }) => {
        bind('lazy').toConstantValue(2);
      }) };
    const container = createContainer({ plugins: [direct, lazy] });
    expect([container.get('direct'), container.get('lazy')]).to.deep.equal([1, 2]);
  });

  it('on a Node without require() of ES modules, says which Node versions it needs instead of ERR_REQUIRE_ESM', () => {
    const noRequireEsm = () => {
      throw Object.assign(new Error('require() of ES Module not supported'), { code: 'ERR_REQUIRE_ESM' });
    };
    expect(() => loadInversify(noRequireEsm)).to.throw(ConfigurationError, /Node >= 20\.19 or >= 22\.12; found Node \d+/);
  });

  it('passes any other loading failure through unchanged', () => {
    const missing = Object.assign(new Error("Cannot find package 'inversify'"), { code: 'ERR_MODULE_NOT_FOUND' });
    expect(() =>
      loadInversify(() => {
        throw missing;
      }),
    ).to.throw(missing);
  });
});
