export { AccessToken } from './access-token.js';
export { assertBindable, isLoopbackAddress, isWildcardAddress } from './bind-address.js';
export {
  LOOPBACK_HOSTS,
  LocalRequestGuard,
  RequestRefusedError,
  sendRefusal,
  type LocalRequestGuardOptions,
  type RefusalReason,
} from './local-request-guard.js';
export { ALLOWED_HOSTS_ENV, allowedHostsFromEnv } from './allowed-hosts-env.js';
export { RequestBodyTooLargeError, readRequestBody } from './request-body.js';
export { ServerSentEventParser, type ServerSentEvent } from './server-sent-events.js';
