// Headless Chromium for real-browser tests (test/browser), driven by playwright-core, which brings no
// browser of its own: Debian's /usr/bin/chromium, or the one SVC_CHROMIUM names. Without one the browser
// tests are skipped with a console message (a new clone's `npm test` still passes) unless
// SVC_REQUIRE_BROWSER=1 (CI), which makes a missing browser a failure.
import { accessSync, constants, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Browser, Page } from 'playwright-core'

export const chromiumPath = () => process.env.SVC_CHROMIUM || '/usr/bin/chromium'
export const browserRequired = () => process.env.SVC_REQUIRE_BROWSER === '1'

/** Host names a test page can be served under (on 127.0.0.1): one allowed, one not, in the widget tests. */
export const TEST_HOSTS = ['shop.example.com', 'evil.example.net'] as const

/**
 * Headless and quiet: no sandbox (CI runs as root), no GPU, and none of Chromium's own traffic to Google's
 * hosts, which this machine's closed network refuses (.library/env/machines/node.md).
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  `--host-resolver-rules=${TEST_HOSTS.map((h) => `MAP ${h} 127.0.0.1`).join(', ')}`,
]

/** Null when Chromium can be started here; else the reason it cannot. */
export function browserMissing(): string | null {
  const path = chromiumPath()
  try {
    accessSync(path, constants.X_OK)
    return null
  } catch {
    return `no executable Chromium at ${path}${process.env.SVC_CHROMIUM ? ' (SVC_CHROMIUM)' : ''}`
  }
}

/** True when the browser tests must be skipped (no Chromium and not required); says so once on the console. */
export function skipBrowserTests(what: string): boolean {
  const missing = browserMissing()
  if (!missing || browserRequired()) return false
  console.warn(
    `[browser tests] ${what} skipped: ${missing}. Install Debian's chromium (apt-get install chromium) or set SVC_CHROMIUM to run them; SVC_REQUIRE_BROWSER=1 turns this skip into a failure.`,
  )
  return true
}

/**
 * Starts headless Chromium with CHROMIUM_ARGS plus `extraArgs` (for instance the fake media flags:
 * --use-fake-ui-for-media-stream --use-fake-device-for-media-stream --use-file-for-fake-audio-capture=<wav>).
 * Each call gets a fresh temporary profile (playwright's default).
 */
export async function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  const missing = browserMissing()
  if (missing) throw new Error(`Chromium is required for the browser tests (SVC_REQUIRE_BROWSER=1): ${missing}`)
  const { chromium } = await import('playwright-core')
  return chromium.launch({ executablePath: chromiumPath(), headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] })
}

export const SCREENSHOT_DIR = resolve(import.meta.dirname, '../../test-output/browser')

/** Saves a screenshot of the page's viewport as test-output/browser/<name>.png; answers the path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true })
  const path = join(SCREENSHOT_DIR, `${name}.png`)
  await page.screenshot({ path })
  return path
}
