import type * as A2AGrpcClient from '@a2a-js/sdk/client/grpc';
import type * as A2ALegacyGrpcServer from '@a2a-js/sdk/compat/v0_3/server/grpc';
import type * as A2AGrpcServer from '@a2a-js/sdk/server/grpc';
import type * as Grpc from '@grpc/grpc-js';
import { loadPeer, requirePeers } from 'skein';

/** What the gRPC binding loads: grpc-js and the SDK's gRPC server and client modules. */
export interface GrpcPeers {
  grpc: typeof Grpc;
  server: typeof A2AGrpcServer;
  legacyServer: typeof A2ALegacyGrpcServer;
  client: typeof A2AGrpcClient;
}

const GRPC_ENTRY_POINT = 'The gRPC binding of skein/a2a';
let peers: GrpcPeers | undefined;

/**
 * `@grpc/grpc-js` and `@bufbuild/protobuf` are optional peers of the gRPC binding only, loaded on
 * first use (`listenGrpc`, or a card whose preferred interface is gRPC), never when skein/a2a is
 * imported: an app that does not use gRPC does not install them. A missing one is a
 * ConfigurationError naming the `npm install` line.
 */
export function grpcPeers(): GrpcPeers {
  if (peers) return peers;
  requirePeers(GRPC_ENTRY_POINT, ['@grpc/grpc-js', '@bufbuild/protobuf']);
  peers = {
    grpc: loadPeer<typeof Grpc>(GRPC_ENTRY_POINT, '@grpc/grpc-js'),
    server: loadPeer<typeof A2AGrpcServer>(GRPC_ENTRY_POINT, '@a2a-js/sdk/server/grpc'),
    legacyServer: loadPeer<typeof A2ALegacyGrpcServer>(GRPC_ENTRY_POINT, '@a2a-js/sdk/compat/v0_3/server/grpc'),
    client: loadPeer<typeof A2AGrpcClient>(GRPC_ENTRY_POINT, '@a2a-js/sdk/client/grpc'),
  };
  return peers;
}
