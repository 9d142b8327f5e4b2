import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { WEB_APP_DIR } from '../../src/http/web-app.js';

/** What the sign-in pages' browser tests share (test/browser/sign-in-browser.test.ts, test/browser/passkeys-browser.test.ts). */

/** Debian's `chromium`; the tests are skipped without it, except on CI (CI=true), as test/browser/docs-browser.test.ts. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const haveBrowser = existsSync(CHROMIUM) || process.env.CI === 'true';

/** dist/app must be newer than every file of web/: else a suite would test yesterday's app. */
export async function expectBuildCurrent(): Promise<void> {
  const web = path.resolve(import.meta.dirname, '..', '..', 'web');
  const built = await stat(path.join(WEB_APP_DIR, 'index.html')).catch(() => undefined);
  const sources = (await readdir(web, { recursive: true, withFileTypes: true })).filter((e) => e.isFile());
  const newest = Math.max(...(await Promise.all(sources.map(async (e) => (await stat(path.join(e.parentPath, e.name))).mtimeMs))));
  if (!built || built.mtimeMs < newest) throw new Error('dist/app is missing or older than web/: run `npm run build:web` (npm ci does)');
}

/** Every field a person fills has a label that names it; the page says its language and title. */
export async function expectLabelled(page: Page): Promise<void> {
  const unlabelled: string[] = [];
  for (const input of await page.locator('input:not([type=hidden])').all()) {
    const id = await input.getAttribute('id');
    if (!id || (await page.locator(`label[for="${id}"]`).count()) !== 1) unlabelled.push(await input.evaluate((e) => e.outerHTML));
  }
  expect(unlabelled).toEqual([]);
  expect(await page.getAttribute('html', 'lang')).toBe('en');
  expect(await page.title()).toMatch(/ - Cardshelf$/);
}

/** WCAG 2.0, 2.1 and 2.2, levels A and AA: the rules axe-core tags so. */
export const WCAG_A_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/** Zero axe violations of WCAG A and AA, and nothing wider than the viewport (no sideways scrolling). */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).withTags(WCAG_A_AA).analyze();
  expect(violations.map((v) => `${what}: ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
  // A string: the test is compiled without the DOM's types.
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
  expect(overflow, `${what} scrolls sideways`).toBeLessThanOrEqual(0);
}

/** Moves the focus with Tab until `name` (an accessible name) has it; fails after 10 presses. */
export async function tabTo(page: Page, name: string): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await page.keyboard.press('Tab');
    // The focused element's accessible name as these pages give it: aria-label, its label, or its text.
    const focused = await page.evaluate<string>(`(() => {
      const el = document.activeElement;
      if (!el) return '';
      const label = el.id ? document.querySelector('label[for="' + el.id + '"]')?.textContent : undefined;
      return (el.getAttribute('aria-label') ?? label ?? el.textContent ?? '').trim();
    })()`);
    if (focused === name) return;
  }
  throw new Error(`Tab never reached ${name}`);
}

