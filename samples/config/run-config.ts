/**
 * Loads samples/config/skein.yaml and talks to both of its agents: a Chat Completions assistant
 * (Skein-managed history) and a Responses researcher (service-managed history), each across a
 * serialize/resume. Without OPENAI_API_KEY it starts the bundled emulator and points the config
 * at it through the environment. Spans are collected in memory and summarised at the end.
 *
 *   npm run build && node dist/samples/config/run-config.js
 */
import 'reflect-metadata';
import { fileURLToPath } from 'node:url';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { type AIAgent, type AgentThread, agentToken, createContainer } from 'skein';
import { Emulator } from 'skein/testing';

// The YAML is not compiled: from dist/samples/config/ it is three levels up, then samples/config/.
const configFile = fileURLToPath(new URL('../../../samples/config/skein.yaml', import.meta.url));

const emulator = process.env.OPENAI_API_KEY ? undefined : await Emulator.start();
if (emulator) {
  process.env.OPENAI_BASE_URL = emulator.openaiBaseURL;
  console.log(`No OPENAI_API_KEY: using the local emulator at ${emulator.openaiBaseURL}`);
} else {
  process.env.OPENAI_BASE_URL ??= 'https://api.openai.com/v1';
  console.log('Using the OpenAI API');
}

// An app installs its OpenTelemetry SDK once; the config's telemetry plugin then records spans.
const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
trace.setGlobalTracerProvider(tracerProvider);

try {
  const container = await createContainer(configFile);
  console.log(`Loaded ${configFile}`);

  for (const name of ['assistant', 'researcher']) {
    const agent = container.get<AIAgent>(agentToken(name));
    console.log(`\n== ${name} ==`);
    const thread = agent.getNewThread();
    await say(agent, 'My name is Alice.', thread);

    // A thread is plain JSON: store it anywhere and resume it (here in the same process).
    const saved = JSON.stringify(await thread.serialize());
    const kind = thread.serviceThreadId ? `service thread ${thread.serviceThreadId}` : 'message-store thread';
    console.log(`(serialized the ${kind}: ${saved.length} bytes)`);
    await say(agent, "What's my name?", await agent.deserializeThread(JSON.parse(saved)));
  }

  console.log('\nSpans recorded:');
  for (const span of spans.getFinishedSpans()) console.log(`  ${span.name}`);
} finally {
  await tracerProvider.shutdown();
  await emulator?.stop();
}

async function say(agent: AIAgent, text: string, thread: AgentThread): Promise<void> {
  console.log(`User: ${text}`);
  const response = await agent.run(text, { thread });
  console.log(`${agent.name}: ${response.text}`);
}
