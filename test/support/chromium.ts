import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

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

/** Does what starts a Dev UI turn, then waits for that turn to end (done, stopped or failed). */
export async function devuiTurn(page: Page, start: () => Promise<void>): Promise<void> {
  const turns = await page.locator('.turn').count();
  await start();
  // Each turn adds an (empty, invisible) turn marker whose state leaves "running" when the turn ends.
  await page.waitForFunction((n) => {
    const all = document.querySelectorAll<HTMLElement>('.turn');
    return all.length > n && all[all.length - 1]!.dataset.state !== 'running';
  }, turns);
}

/** Types and sends a message on the Dev UI page, then waits for the turn to end. */
export function devuiSend(page: Page, text: string): Promise<void> {
  return devuiTurn(page, async () => {
    await page.fill('#input', text);
    await page.click('#send');
  });
}
