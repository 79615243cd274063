import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** Debian's chromium (the machines have it), or WRIT_CHROMIUM. */
export const CHROMIUM = process.env['WRIT_CHROMIUM'] ?? '/usr/bin/chromium';

/** A headless chromium for the console specs: no sandbox (root in CI), no background traffic. */
export function launchConsoleBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * Opens the console served at `<apiUrl>/console/` as `principalId`: its
 * private JWK pasted into the login form (a file picker takes the same text).
 * `beforeSubmit` runs with the form filled (a screenshot of it). Then the form
 * is gone, and with it the key's text: only a non-extractable CryptoKey is
 * left in the page.
 */
export async function logInToConsole(page: Page, apiUrl: string, principalId: string, jwkText: string, beforeSubmit?: () => Promise<void>): Promise<void> {
  await page.goto(`${apiUrl}/console/`);
  await page.fill('input[name=principal]', principalId);
  await page.fill('textarea[name=key]', jwkText);
  await beforeSubmit?.();
  await page.click('form[data-testid=login-form] button[type=submit]');
  await page.waitForSelector('[data-testid=who]', { timeout: 30_000 });
  expect(await page.locator('textarea[name=key]').count()).toBe(0);
}
