import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (apt-get install -y chromium), or SKEIN_CHROMIUM. */
export const CHROMIUM = process.env.SKEIN_CHROMIUM ?? '/usr/bin/chromium';

/** Headless, and nothing that reaches out to the network on its own (this machine's network is closed). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // A DNS rebinding in one flag: this name resolves to the loopback address, as an attacker's would once rebound.
  '--host-resolver-rules=MAP rebind.test 127.0.0.1',
];

/**
 * Chromium for a browser suite (call from its `before`). Without Chromium the suite is skipped,
 * saying how to install it, or fails when SKEIN_REQUIRE_BROWSER=1 (CI).
 */
export async function launchChromium(suite: Mocha.Context): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    const why = `${CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium) to run the Dev UI browser tests.`;
    if (process.env.SKEIN_REQUIRE_BROWSER === '1') throw new Error(why);
    console.log(`      skipped: ${why}`);
    suite.skip();
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
