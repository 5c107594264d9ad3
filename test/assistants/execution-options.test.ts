import { expect } from 'chai';
import { SerializationError } from 'skein';
import { parseExecutionOptions } from 'skein/openai';

function rejection(value: unknown): SerializationError {
  try {
    parseExecutionOptions(value, 'metadata.__run_options');
  } catch (error) {
    expect(error).to.be.instanceOf(SerializationError);
    return error as SerializationError;
  }
  throw new Error(`accepted ${JSON.stringify(value)}`);
}

describe('assistants: execution options read from untrusted JSON', () => {
  it('accepts every option and returns a copy the caller cannot change afterwards', () => {
    const input = {
      maxPromptTokens: 1000,
      maxCompletionTokens: 200,
      parallelToolCalls: false,
      truncationMessageCount: 6,
      additionalInstructions: 'Be brief.',
      temperature: 0.2,
      topP: 0.9,
      toolCallBehavior: { toolChoice: { name: 'lookup' }, maxToolRounds: 0 },
    };
    const parsed = parseExecutionOptions(input, 'options');
    expect(parsed).to.deep.equal(input);
    input.toolCallBehavior.toolChoice.name = 'changed';
    input.maxPromptTokens = 1;
    expect(parsed.maxPromptTokens).to.equal(1000);
    expect(parsed.toolCallBehavior?.toolChoice).to.deep.equal({ name: 'lookup' });
  });

  it('accepts the named tool choices and an empty object', () => {
    for (const toolChoice of ['auto', 'none', 'required'] as const) {
      expect(parseExecutionOptions({ toolCallBehavior: { toolChoice } }, 'o')).to.deep.equal({ toolCallBehavior: { toolChoice } });
    }
    expect(parseExecutionOptions({}, 'o')).to.deep.equal({});
  });

  const bad: [string, unknown, string][] = [
    ['not an object', 'fast', 'metadata.__run_options'],
    ['an unknown option', { maxTokens: 5 }, 'metadata.__run_options.maxTokens'],
    ['a token limit of zero', { maxCompletionTokens: 0 }, 'metadata.__run_options.maxCompletionTokens'],
    ['a fractional message count', { truncationMessageCount: 2.5 }, 'metadata.__run_options.truncationMessageCount'],
    ['a string where a number belongs', { temperature: '0.2' }, 'metadata.__run_options.temperature'],
    ['a number where a boolean belongs', { parallelToolCalls: 1 }, 'metadata.__run_options.parallelToolCalls'],
    ['an unknown tool choice', { toolCallBehavior: { toolChoice: 'always' } }, 'metadata.__run_options.toolCallBehavior.toolChoice'],
    ['a named choice without a name', { toolCallBehavior: { toolChoice: {} } }, 'metadata.__run_options.toolCallBehavior.toolChoice.name'],
    ['a named choice with extra fields', { toolCallBehavior: { toolChoice: { name: 'x', type: 'function' } } }, 'metadata.__run_options.toolCallBehavior.toolChoice.type'],
    ['negative tool rounds', { toolCallBehavior: { maxToolRounds: -1 } }, 'metadata.__run_options.toolCallBehavior.maxToolRounds'],
    ['an unknown behavior field', { toolCallBehavior: { retries: 2 } }, 'metadata.__run_options.toolCallBehavior.retries'],
  ];
  for (const [what, value, path] of bad) {
    it(`rejects ${what}, naming ${path}`, () => {
      const error = rejection(value);
      expect(error.path).to.equal(path);
      expect(error.message).to.include(path);
    });
  }
});
