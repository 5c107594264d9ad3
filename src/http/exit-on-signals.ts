/**
 * For a local server run from a command line: on SIGINT or SIGTERM, close it, then end the
 * process (exit 0, or 1 when closing failed).
 */
export function exitOnSignals(close: () => Promise<void>): void {
  const shutdown = () => {
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}
