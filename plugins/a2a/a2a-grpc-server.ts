import type { A2ARequestHandler, User } from '@a2a-js/sdk/server';
import type { Server, ServerErrorResponse, ServerUnaryCall, ServerWritableStream, ServiceDefinition, UntypedServiceImplementation } from '@grpc/grpc-js';
import { grpcPeers } from './grpc-peers.js';

/** What a `grpcUserBuilder` gets for one gRPC call. */
export interface A2AGrpcRequest {
  /**
   * The call's metadata as headers: lower-case names, text values (binary `-bin` entries are
   * left out), e.g. `headers.authorization`. A function reading `req.headers` can serve both
   * the HTTP bindings (`userBuilder`) and gRPC.
   */
  headers: Record<string, string>;
  /** The gRPC method, e.g. `/lf.a2a.v1.A2AService/SendMessage`. */
  method: string;
  /** The caller's address as gRPC reports it, e.g. `ipv4:127.0.0.1:51234`. */
  peer: string;
}

/** TLS for `listenGrpc`: the server's private key and certificate chain (PEM). */
export interface A2AGrpcTls {
  key: string | Buffer;
  cert: string | Buffer;
}

/** Authentication for the gRPC binding: the call (its metadata) to a user, as `userBuilder` does for HTTP. */
export type A2AGrpcUserBuilder = (request: A2AGrpcRequest) => Promise<User>;

export interface GrpcBindingOptions {
  requestHandler: A2ARequestHandler;
  /** Unset: the server is open, every caller the same anonymous owner. */
  userBuilder: A2AGrpcUserBuilder | undefined;
  /** Serve A2A 0.3 gRPC clients too (the SDK's legacy service, beside the 1.0 one). */
  legacy: boolean;
  /** Called before every call (the open-server notice). */
  onCall: () => void;
  /** A builder that threw: the reason goes to the log, the caller only hears UNAUTHENTICATED. */
  onRefused: (error: unknown) => void;
}

type Call = ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>;
type Callback = (error: ServerErrorResponse | null, value?: unknown) => void;

const ANONYMOUS: User = { isAuthenticated: false, userName: '' };
const UNAUTHENTICATED_DETAILS =
  "Authentication required (gRPC UNAUTHENTICATED): send the credentials the agent card's securitySchemes ask for as call metadata, e.g. authorization: Bearer <token>.";

/**
 * The A2A gRPC service (the SDK's `grpcService`, and its 0.3 `legacyGrpcService`) on a grpc-js
 * server, over the same request handler as the HTTP bindings. Every call is authenticated
 * first: no authenticated user, no A2A processing (status UNAUTHENTICATED).
 */
export class GrpcBinding {
  readonly #options: GrpcBindingOptions;
  readonly #users = new WeakMap<object, User>();
  #server: Server | undefined;

  constructor(options: GrpcBindingOptions) {
    this.#options = options;
  }

  /** Binds `host:port` (plaintext HTTP/2, or TLS with `tls`) and resolves with the port bound. */
  async listen(port: number, host: string, tls?: A2AGrpcTls): Promise<number> {
    const { grpc, server: sdk, legacyServer } = grpcPeers();
    const server = new grpc.Server();
    // The gate already resolved the user; the SDK's service reads it back per call.
    const userBuilder = async (call: Call) => this.#users.get(call) ?? ANONYMOUS;
    const { requestHandler } = this.#options;
    this.#add(server, sdk.A2AService, sdk.grpcService({ requestHandler, userBuilder }));
    if (this.#options.legacy) this.#add(server, legacyServer.LegacyA2AService, legacyServer.legacyGrpcService({ requestHandler, userBuilder }));
    const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    const credentials = tls
      ? grpc.ServerCredentials.createSsl(null, [{ private_key: Buffer.from(tls.key), cert_chain: Buffer.from(tls.cert) }], false)
      : grpc.ServerCredentials.createInsecure();
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(address, credentials, (error, p) => {
        if (!error) return resolve(p);
        server.forceShutdown();
        // grpc-js says "No address added out of total 1 resolved errors: [listen EADDRINUSE ...]".
        reject(new Error(`A2AServer could not serve gRPC on ${address}: ${error.message}. Free the port or pass another to listenGrpc(port, host).`, { cause: error }));
      }),
    );
    this.#server = server;
    return bound;
  }

  /** Stops accepting calls and ends the open ones (their callers get UNAVAILABLE or CANCELLED). */
  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    server?.forceShutdown();
  }

  #add(server: Server, service: ServiceDefinition, implementation: UntypedServiceImplementation): void {
    const gated: UntypedServiceImplementation = {};
    for (const [name, handler] of Object.entries(implementation)) {
      const run = handler as (call: Call, callback?: Callback) => void;
      gated[name] = (call: Call, callback?: Callback) => {
        void this.#authenticate(call).then((allowed) => {
          if (allowed) return run(call, callback);
          const { UNAUTHENTICATED } = grpcPeers().grpc.status;
          const refusal = Object.assign(new Error(UNAUTHENTICATED_DETAILS), { code: UNAUTHENTICATED, details: UNAUTHENTICATED_DETAILS });
          if (callback) callback(refusal);
          else (call as ServerWritableStream<unknown, unknown>).emit('error', refusal);
        });
      };
    }
    server.addService(service, gated);
  }

  /** Never rejects: a builder that throws refuses the call. */
  async #authenticate(call: Call): Promise<boolean> {
    try {
      this.#options.onCall();
      const builder = this.#options.userBuilder;
      if (!builder) return true;
      const user = await builder({ headers: metadataHeaders(call), method: call.getPath(), peer: call.getPeer() });
      if (!user?.isAuthenticated) return false;
      this.#users.set(call, user);
      return true;
    } catch (error) {
      this.#options.onRefused(error);
      return false;
    }
  }
}

function metadataHeaders(call: Call): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(call.metadata.getMap())) if (typeof value === 'string') headers[key] = value;
  return headers;
}
