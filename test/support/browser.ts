/** Debian's Chromium through playwright-core, on a fresh temporary profile (never a downloaded browser). */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const SCREENSHOTS = join(__dirname, '..', '..', '..', 'test-output', 'screenshots');

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Console errors and page errors seen so far. */
  errors: string[];
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** `locale`: the browser's language (navigator.language and Accept-Language), as a user's would be. */
export async function openBrowser(options: { locale?: string } = {}): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'bulkgate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    ...(options.locale ? { locale: options.locale } : {}),
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => {
    errors.push(String(e));
    // The assertion shows the message; the log says where it came from.
    console.warn(`      page error: ${e.stack ?? String(e)}`);
  });
  // "Failed to load resource" does not say which: name it.
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`HTTP ${r.status()} ${r.url()}`);
  });
  mkdirSync(SCREENSHOTS, { recursive: true });
  return {
    context,
    page,
    errors,
    screenshot: async (name) => {
      await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
    },
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
