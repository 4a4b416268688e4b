/**
 * Chromium for the web simulator's tests: Debian's `/usr/bin/chromium` through playwright-core.
 * A missing browser fails the test that needs it (never a skip), so CI cannot pass without it.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium (`COLLOQUY_CHROMIUM` points elsewhere). */
export const CHROMIUM = process.env['COLLOQUY_CHROMIUM'] ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

/** Where screenshots go (`COLLOQUY_SCREENSHOTS`, else a folder in the system's temp dir). */
export const SHOTS = process.env['COLLOQUY_SCREENSHOTS'] ?? join(tmpdir(), 'colloquy-screenshots');

/** Throws (failing the test) when Chromium is not installed. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: the web simulator's browser tests need Debian's chromium (apt-get install -y chromium; .ci/run installs it)`);
  }
}

/** Launches Chromium, or returns undefined when it is missing (each test then fails with {@link requireChromium}). */
export async function launchChromium(): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) return undefined;
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** Saves a screenshot of the viewport as `SHOTS/<name>.png`. */
export async function shot(page: Page, name: string): Promise<string> {
  const path = join(SHOTS, `${name}.png`);
  await page.screenshot({ path, animations: 'disabled' });
  return path;
}

/** Lets only `origin`'s URLs load; every other request is aborted, so none leaves loopback. */
export async function onlyLoopback(page: Page, origin: string): Promise<void> {
  await page.route('**/*', (route) => (route.request().url().startsWith(`${origin}/`) ? route.continue() : route.abort()));
}
