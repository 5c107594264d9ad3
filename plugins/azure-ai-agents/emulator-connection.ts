import type { AgentsClientOptionalParams } from '@azure/ai-agents';
import type { TokenCredential } from '@azure/core-auth';
import type { HttpClient } from '@azure/core-rest-pipeline';
import { AgentsClient, createDefaultHttpClient } from './azure-peers.js';

/**
 * Offline wiring for `@azure/ai-agents` against Skein's emulator (or any loopback Foundry fake).
 * The SDK's bearer-token policy refuses plain http:// URLs whatever the options, so the client
 * is given an https:// project endpoint and an httpClient that rewrites each request back to
 * http:// (with `allowInsecureConnection`) just before it goes on the wire.
 */
export function loopbackHttpClient(inner: HttpClient = createDefaultHttpClient()): HttpClient {
  return {
    sendRequest: (request) => {
      if (request.url.startsWith('https://127.0.0.1') || request.url.startsWith('https://localhost')) {
        request.url = request.url.replace(/^https:/, 'http:');
        request.allowInsecureConnection = true;
      }
      return inner.sendRequest(request);
    },
  };
}

/** A TokenCredential that hands out a fixed token (the emulator's `apiKey` when it checks one). */
export function staticTokenCredential(token = 'emulator'): TokenCredential {
  return { getToken: async () => ({ token, expiresOnTimestamp: Date.now() + 3.6e6 }) };
}

export interface EmulatorConnectionOptions {
  /** The emulator's token, when it was started with `apiKey`. */
  token?: string;
  project?: string;
  /** Extra SDK options (e.g. `retryOptions`). */
  clientOptions?: AgentsClientOptionalParams;
}

/**
 * The https:// project endpoint of a loopback Foundry emulator at `emulatorUrl` (the emulator
 * serves projects under `/api/projects/<project>`). Same as `foundryProjectEndpoint` in
 * `skein/testing`, repeated so production code need not import the testing entry point.
 */
export function emulatorProjectEndpoint(emulatorUrl: string, project = 'emulated'): string {
  return `${emulatorUrl.replace(/^http:/, 'https:')}/api/projects/${project}`;
}

/** What `new AgentsClient(endpoint, credential, clientOptions)` takes to reach an emulator. */
export interface EmulatorConnection {
  endpoint: string;
  credential: TokenCredential;
  clientOptions: AgentsClientOptionalParams & { httpClient: HttpClient };
}

/** Endpoint, credential and SDK options for an emulator at `emulatorUrl` (e.g. `emulator.url`). */
export function emulatorConnection(emulatorUrl: string, options: EmulatorConnectionOptions = {}): EmulatorConnection {
  return {
    endpoint: emulatorProjectEndpoint(emulatorUrl, options.project),
    credential: staticTokenCredential(options.token),
    clientOptions: { ...options.clientOptions, httpClient: loopbackHttpClient() } satisfies AgentsClientOptionalParams,
  };
}

/** An `AgentsClient` talking to the emulator at `emulatorUrl`. */
export function createEmulatorAgentsClient(emulatorUrl: string, options: EmulatorConnectionOptions = {}): AgentsClient {
  const c = emulatorConnection(emulatorUrl, options);
  return new AgentsClient(c.endpoint, c.credential, c.clientOptions);
}
