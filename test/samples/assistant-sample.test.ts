import { expect } from 'chai';
import { runSample } from '../support/run-sample.js';

describe('samples/assistant', () => {
  it('runs the assistant lifecycle and a cited file-search answer on the emulator', async () => {
    const stdout = await runSample('assistant.js');
    expect(stdout).to.contain('get_weather returned: sunny, 21°C in Lisbon');
    expect(stdout).to.contain('streamed: Your name is Ada.');
    expect(stdout).to.contain('[image: https://upload.wikimedia.org/wikipedia/commons/3/3f/JPEG_example_flower.jpg]');
    expect(stdout).to.match(/trip: \{"city":".+","days":3\}/);
    expect(stdout).to.contain('According to travel-policy.md: "Economy tickets can be changed for a fee of 50 euros."【0:0†source】');
    expect(stdout).to.match(/cites travel-policy\.md at \d+\.\.\d+/);
  });
});
