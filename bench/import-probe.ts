/**
 * Child process: imports the modules named on the command line, then prints its memory as JSON.
 * With `--container` it also builds a container with the OpenAI plugin, which loads inversify.
 */
const args = process.argv.slice(2);
for (const name of args.filter((a) => a !== '--container')) await import(name);
if (args.includes('--container')) {
  const { createContainer } = await import('skein');
  const { openaiPlugin } = await import('skein/openai');
  createContainer({ plugins: [openaiPlugin({ apiKey: 'probe' })], agents: { probe: { client: 'openai-chat', model: 'm' } } });
}
(globalThis as { gc?: () => void }).gc?.();
const { rss, heapUsed } = process.memoryUsage();
process.stdout.write(JSON.stringify({ rss, heapUsed }));
