import type OpenAI from 'openai';
import type { ClientOptions } from 'openai';
import { ConfigurationError } from 'skein';
import { createAzureOpenAISdkClient, createOpenAISdkClient } from '../openai-sdk-client.js';
import { OPENAI_ASSISTANTS_CLIENT_ID } from './openai-assistant-calls.js';

/** A token credential (Microsoft Entra ID): returns a bearer token for each request. */
export type TokenProvider = () => Promise<string>;

/**
 * Which service and how: OpenAI, Azure OpenAI, or an OpenAI-compatible proxy. One value builds
 * the SDK client, so no call site needs an overload per service.
 */
export class OpenAIServiceConfiguration {
  private constructor(
    readonly kind: 'openai' | 'azure',
    private readonly options: Omit<ClientOptions, 'apiKey'> & { apiKey?: string; endpoint?: string; apiVersion?: string; deployment?: string; azureADTokenProvider?: TokenProvider },
  ) {}

  /** OpenAI itself, or a proxy when `baseURL` is given. */
  static forOpenAI(options: { apiKey?: string; baseURL?: string; organization?: string; maxRetries?: number; timeout?: number; defaultHeaders?: Record<string, string> } = {}): OpenAIServiceConfiguration {
    return new OpenAIServiceConfiguration('openai', options);
  }

  /** Azure OpenAI with an API key or a token credential. */
  static forAzure(options: { endpoint: string; apiVersion: string; apiKey?: string; tokenProvider?: TokenProvider; deployment?: string; maxRetries?: number }): OpenAIServiceConfiguration {
    if (!options.apiKey && !options.tokenProvider) {
      throw new ConfigurationError('Azure OpenAI needs an apiKey or a tokenProvider (token credential).');
    }
    const { tokenProvider, ...rest } = options;
    return new OpenAIServiceConfiguration('azure', { ...rest, azureADTokenProvider: tokenProvider });
  }

  get baseURL(): string | undefined {
    return this.options.baseURL ?? this.options.endpoint ?? undefined;
  }

  createClient(): OpenAI {
    if (this.kind === 'azure') {
      const { endpoint, apiVersion, deployment, azureADTokenProvider, apiKey, maxRetries } = this.options;
      return createAzureOpenAISdkClient(OPENAI_ASSISTANTS_CLIENT_ID, { endpoint, apiVersion, deployment, azureADTokenProvider, apiKey, maxRetries });
    }
    return createOpenAISdkClient(OPENAI_ASSISTANTS_CLIENT_ID, this.options);
  }
}

/** Accepts an SDK client or a configuration. */
export function clientFrom(source: OpenAI | OpenAIServiceConfiguration): OpenAI {
  return source instanceof OpenAIServiceConfiguration ? source.createClient() : source;
}
