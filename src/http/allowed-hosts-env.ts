/** The environment variable both `skein devui` and `skein emulator` read extra allowed hosts from. */
export const ALLOWED_HOSTS_ENV = 'SKEIN_ALLOWED_HOSTS';

/** `SKEIN_ALLOWED_HOSTS=devbox.local,devbox.local:8443` as a list (commas or spaces separate). */
export function allowedHostsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env[ALLOWED_HOSTS_ENV] ?? '').split(/[\s,]+/).filter(Boolean);
}
