import { expect } from 'chai';
import { type ChatMessage, MessageCountReducer, TokenBudgetReducer, messageText } from 'skein';

const sys: ChatMessage = { role: 'system', contents: [{ kind: 'text', text: 'rules' }] };
const u = (t: string): ChatMessage => ({ role: 'user', contents: [{ kind: 'text', text: t }] });
const a = (t: string): ChatMessage => ({ role: 'assistant', contents: [{ kind: 'text', text: t }] });
const call = (id: string): ChatMessage => ({ role: 'assistant', contents: [{ kind: 'function-call', callId: id, name: 'f', arguments: '{}' }] });
const result = (id: string): ChatMessage => ({ role: 'tool', contents: [{ kind: 'function-result', callId: id, result: id }] });

function label(m: ChatMessage): string {
  const c = m.contents[0]!;
  return c.kind === 'function-call' ? `call:${c.callId}` : c.kind === 'function-result' ? `result:${c.callId}` : messageText(m);
}

describe('ChatReducer', () => {
  const history = [sys, u('q1'), a('a1'), u('q2'), call('c1'), call('c2'), result('c1'), result('c2'), a('a2'), u('q3')];

  describe('MessageCountReducer', () => {
    it('returns a short history unchanged', () => {
      expect(new MessageCountReducer(20).reduce(history)).to.deep.equal(history);
    });

    it('keeps the system message and the newest messages', () => {
      expect(new MessageCountReducer(3).reduce(history).map(label)).to.deep.equal(['rules', 'a2', 'q3']);
    });

    it('never keeps a result without its call, nor a call without its results', () => {
      // 6 fits only part of the call group; the whole group is dropped rather than split.
      expect(new MessageCountReducer(6).reduce(history).map(label)).to.deep.equal(['rules', 'a2', 'q3']);
      expect(new MessageCountReducer(8).reduce(history).map(label)).to.deep.equal([
        'rules', 'q2', 'call:c1', 'call:c2', 'result:c1', 'result:c2', 'a2', 'q3',
      ]);
    });

    it('drops results whose call is no longer in the history', () => {
      expect(new MessageCountReducer(10).reduce([result('gone'), a('x'), u('y')]).map(label)).to.deep.equal(['x', 'y']);
    });

    it('rejects a non-positive limit', () => {
      expect(() => new MessageCountReducer(0)).to.throw(RangeError);
    });
  });

  describe('TokenBudgetReducer', () => {
    it('keeps the newest turns that fit the budget, counting with the given function', () => {
      const reducer = new TokenBudgetReducer({ maxTokens: 10, countTokens: (m) => (m.role === 'system' ? 1 : 3) });
      expect(reducer.reduce(history).map(label)).to.deep.equal(['rules', 'a2', 'q3']);
    });

    it('keeps a call group whole or not at all', () => {
      const reducer = new TokenBudgetReducer({ maxTokens: 1000 });
      expect(reducer.reduce(history)).to.deep.equal(history);
      const tight = new TokenBudgetReducer({ maxTokens: 30 }).reduce(history).map(label);
      const hasCall = tight.includes('call:c1');
      expect(tight.includes('result:c1')).to.equal(hasCall);
      expect(tight.includes('result:c2')).to.equal(hasCall);
    });

    it('keeps at least the newest message even when it alone is over budget', () => {
      expect(new TokenBudgetReducer({ maxTokens: 1 }).reduce([u('a'.repeat(400))])).to.have.length(1);
    });
  });
});
