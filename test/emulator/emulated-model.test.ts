import { expect } from 'chai';
import { EmulatedModel, toolNameWords, type ModelMessage, type ModelTool } from '../../src/testing/emulator/index.js';

const weather: ModelTool = {
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'number' } } },
};
const time: ModelTool = { name: 'getLocalTime', parameters: { type: 'object', properties: { zone: { type: 'string' } } } };

const user = (text: string): ModelMessage => ({ role: 'user', text });
const assistant = (text: string): ModelMessage => ({ role: 'assistant', text });

describe('EmulatedModel', () => {
  const model = new EmulatedModel();

  describe('tool results', () => {
    const history: ModelMessage[] = [
      user('What is the weather in Paris?'),
      { role: 'assistant', text: '', toolCalls: [{ id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      { role: 'tool', text: '{"temp":21}', toolCallId: 'call_9' },
    ];

    it('reports each result with the name of the call it answers', () => {
      expect(model.reply(history, [weather])).to.deep.equal({ text: 'get_weather returned: {"temp":21}' });
    });

    it('answers results even when the tool is no longer offered', () => {
      expect(model.reply(history, [])).to.deep.equal({ text: 'get_weather returned: {"temp":21}' });
    });

    it('calls the tool again with the same arguments when told to keep calling it', () => {
      const messages = [{ ...history[0], text: 'keep calling get_weather please' }, ...history.slice(1)];
      expect(model.reply(messages, [weather])).to.deep.equal({
        toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }],
      });
    });

    it('stops calling when the kept tool is not offered', () => {
      const messages = [{ ...history[0], text: 'keep calling get_weather please' }, ...history.slice(1)];
      expect(model.reply(messages, [])).to.deep.equal({ text: 'get_weather returned: {"temp":21}' });
    });
  });

  describe('explicit calls', () => {
    it('returns the named calls in order with raw arguments', () => {
      const reply = model.reply([user('call get_weather {"city":"Oslo"} and call getLocalTime {"zone":"CET"}')], [weather, time]);
      expect(reply).to.deep.equal({
        toolCalls: [
          { name: 'get_weather', arguments: '{"city":"Oslo"}' },
          { name: 'getLocalTime', arguments: '{"zone":"CET"}' },
        ],
      });
    });

    it('keeps invalid JSON arguments as they are', () => {
      expect(model.reply([user('call get_weather {city: Oslo')], [weather])).to.deep.equal({
        toolCalls: [{ name: 'get_weather', arguments: '{city: Oslo' }],
      });
    });

    it('uses {} when no arguments follow the name', () => {
      expect(model.reply([user('call get_weather')], [weather])).to.deep.equal({
        toolCalls: [{ name: 'get_weather', arguments: '{}' }],
      });
    });

    it('ignores calls to tools that are not offered', () => {
      expect(model.reply([user('call get_weather {}')], [])).to.have.property('text');
    });
  });

  describe('natural tool use', () => {
    it('fills string properties with the last capitalized word', () => {
      expect(model.reply([user('What is the weather in Paris?')], [weather])).to.deep.equal({
        toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }],
      });
    });

    it('calls several matching tools in parallel', () => {
      const reply = model.reply([user('Tell me the weather and local time in Rome')], [weather, time]);
      expect(reply).to.deep.equal({
        toolCalls: [
          { name: 'get_weather', arguments: '{"city":"Rome"}' },
          { name: 'getLocalTime', arguments: '{"zone":"Rome"}' },
        ],
      });
    });

    it('splits tool names on underscores and camelCase, ignoring generic verbs', () => {
      expect(toolNameWords('get_current_weather')).to.deep.equal(['current', 'weather']);
      expect(toolNameWords('lookupUserAccount')).to.deep.equal(['user', 'account']);
    });

    it('does not match a name word inside a longer word', () => {
      expect(model.reply([user('Weathering the storm')], [weather])).to.have.property('text');
    });
  });

  describe('conversation', () => {
    it('greets a user who gives a name', () => {
      expect(model.reply([user('Hi, my name is Ada.')], [])).to.deep.equal({ text: 'Nice to meet you, Ada!' });
    });

    it('remembers a name only from earlier messages it is sent', () => {
      const history = [user('my name is Ada'), assistant('Nice to meet you, Ada!'), user("What's my name?")];
      expect(model.reply(history, [])).to.deep.equal({ text: 'Your name is Ada.' });
      expect(model.reply([user('what is my name')], [])).to.deep.equal({ text: "I don't know your name yet." });
    });

    it('uses the latest name given', () => {
      const history = [user('my name is Ada'), user('my name is Grace'), user('what is my name?')];
      expect(model.reply(history, [])).to.deep.equal({ text: 'Your name is Grace.' });
    });

    it('lists what was talked about', () => {
      const history = [user('hello'), assistant('hi'), user('nice day'), user('What did we talk about?')];
      expect(model.reply(history, [])).to.deep.equal({ text: 'We talked about: "hello"; "nice day"' });
      expect(model.reply([user('what have we talked about')], [])).to.deep.equal({
        text: 'We have not talked about anything yet.',
      });
    });

    it('repeats its instructions', () => {
      const messages: ModelMessage[] = [{ role: 'system', text: 'Be brief.' }, user('What are your instructions?')];
      expect(model.reply(messages, [])).to.deep.equal({ text: 'Be brief.' });
      expect(model.reply([user('what are your instructions')], [])).to.deep.equal({ text: 'I have no instructions.' });
    });

    it('echoes anything else with the number of earlier messages', () => {
      const messages: ModelMessage[] = [{ role: 'system', text: 'x' }, user('a'), assistant('b'), user('Hello there')];
      expect(model.reply(messages, [])).to.deep.equal({ text: 'You said: "Hello there" (I have seen 3 earlier messages.)' });
    });
  });

  it('counts tokens as words', () => {
    expect(model.countTokens('  one two\nthree ')).to.equal(3);
  });
});
