import OpenAI, { AzureOpenAI, type ClientOptions } from 'openai';
import type { AzureClientOptions } from 'openai/azure';
import { ConfigurationError } from 'skein';

/** An environment variable as the SDK reads it (trimmed; empty counts as unset). */
function env(name: string): string | undefined {
  const value = process.env[name]?.trim();
  return value ? value : undefined;
}

/**
 * `new OpenAI(options)`, with a missing credential reported as a ConfigurationError that names the
 * setting and the environment variable (the SDK's own error says neither which client nor which
 * config key). Any other construction error of the SDK becomes a ConfigurationError too.
 */
export function createOpenAISdkClient(clientId: string, options: ClientOptions): OpenAI {
  const { apiKey, adminAPIKey, workloadIdentity, provider } = options as ClientOptions & { adminAPIKey?: unknown; workloadIdentity?: unknown; provider?: unknown };
  if (!provider && !workloadIdentity && !apiKey && !adminAPIKey && !env('OPENAI_API_KEY') && !env('OPENAI_ADMIN_KEY')) {
    throw new ConfigurationError(
      `The ${clientId} client has no OpenAI API key: set the apiKey option (plugins.openai.apiKey in a config file, e.g. apiKey: \${OPENAI_API_KEY}) or the OPENAI_API_KEY environment variable.`,
    );
  }
  return construct(clientId, () => new OpenAI(options));
}

/** `new AzureOpenAI(options)`, with a missing key, API version or endpoint named the same way. */
export function createAzureOpenAISdkClient(clientId: string, options: AzureClientOptions): AzureOpenAI {
  const missing: string[] = [];
  if (!options.apiVersion && !env('OPENAI_API_VERSION')) missing.push('API version: set the apiVersion option or the OPENAI_API_VERSION environment variable');
  if (!options.apiKey && !options.azureADTokenProvider && !env('AZURE_OPENAI_API_KEY')) {
    missing.push('credential: set the apiKey option (or azureADTokenProvider) or the AZURE_OPENAI_API_KEY environment variable');
  }
  if (!options.endpoint && !options.baseURL && !env('AZURE_OPENAI_ENDPOINT') && !env('OPENAI_BASE_URL')) {
    missing.push('endpoint: set the endpoint option or the AZURE_OPENAI_ENDPOINT environment variable');
  }
  if (missing.length) throw new ConfigurationError(missing.map((m) => `The ${clientId} client (Azure OpenAI) has no ${m}.`));
  return construct(clientId, () => new AzureOpenAI(options));
}

function construct<T>(clientId: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof OpenAI.OpenAIError) throw new ConfigurationError(`The ${clientId} client cannot be built: ${error.message}`);
    throw error;
  }
}
