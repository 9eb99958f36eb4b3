// The knowledge sync's pure parts (decisions "Knowledge sync"): scheduled moments spread over the period and
// due once per period; the sitemap reader's lastmod rules, site filter and linear scan.
import { describe, expect, it } from 'vitest'
import { isDue, offsetOf, PERIOD_MS, slotStart } from '~/domain/kb/sync-schedule'
import { parseLastmod, readEntries } from '~/domain/kb/sitemap'
import { verifies } from '../requirements'

const HOUR = 3_600_000
const DAY = 24 * HOUR

describe('scheduled moments', () => {
  it('a thousand agents fall in every hour of the day and every day of the week', () => {
    verifies('fresh.sync.schedule-spread')
    const ids = Array.from({ length: 1000 }, (_, i) => `agt_${i + 1}`)
    const hours = new Map<number, number>()
    for (const id of ids) {
      const h = Math.floor(offsetOf(id, PERIOD_MS.daily) / HOUR)
      hours.set(h, (hours.get(h) ?? 0) + 1)
    }
    expect(hours.size).toBe(24)
    // Roughly even: no hour holds more than three times its share.
    for (const n of hours.values()) expect(n).toBeLessThan((1000 / 24) * 3)
    const days = new Set(ids.map((id) => Math.floor(offsetOf(id, PERIOD_MS.weekly) / DAY)))
    expect(days.size).toBe(7)
    // Not all at midnight: the offsets differ between agents.
    expect(new Set(ids.map((id) => offsetOf(id, PERIOD_MS.daily))).size).toBeGreaterThan(990)
  })

  it('is due once a period, after its moment, only when nothing fetched since', () => {
    verifies('fresh.sync.schedule-spread')
    const id = 'agt_42'
    const now = Date.UTC(2026, 10, 27, 12)
    const moment = slotStart(id, 'daily', now)
    expect(moment).toBeLessThanOrEqual(now)
    expect(now - moment).toBeLessThan(DAY)
    expect(isDue(id, 'off', null, now)).toBe(false)
    expect(isDue(id, 'daily', null, now)).toBe(true)
    expect(isDue(id, 'daily', moment - 1, now)).toBe(true)
    // A sync (or a fetch) after this period's moment: not due again until the next moment.
    expect(isDue(id, 'daily', moment + 1, now)).toBe(false)
    expect(isDue(id, 'daily', moment + 1, moment + DAY - 1)).toBe(false)
    expect(isDue(id, 'daily', moment + 1, moment + DAY)).toBe(true)
    const week = slotStart(id, 'weekly', now)
    expect(isDue(id, 'weekly', week + 1, week + 6 * DAY)).toBe(false)
    expect(isDue(id, 'weekly', week + 1, week + 7 * DAY)).toBe(true)
  })
})

describe('sitemap reading', () => {
  it("keeps the site's own entries with their lastmod; a date alone counts as the end of that day", () => {
    verifies('fresh.sync.bounds', 'fresh.sync.unchanged')
    const o = 'https://shop.example'
    const xml = `<urlset><url><loc>${o}/a</loc><lastmod>2026-11-20</lastmod></url><url><loc> ${o}/b?x=1&amp;y=2#top </loc><lastmod>2026-11-20T10:00:00+00:00</lastmod></url><url><loc>https://elsewhere.example/c</loc></url><url><loc>not a url</loc></url><url><loc>${o}/d</loc><lastmod>garbage</lastmod></url><url><loc>${o}/cut</loc>`
    expect(readEntries(xml, 'url', o)).toEqual([
      { url: `${o}/a`, lastmod: Date.UTC(2026, 10, 21) },
      { url: `${o}/b?x=1&y=2`, lastmod: Date.UTC(2026, 10, 20, 10) },
      { url: `${o}/d`, lastmod: null },
    ])
    expect(parseLastmod('2026-11')).toBe(Date.UTC(2026, 11, 1))
    expect(parseLastmod('2026')).toBe(Date.UTC(2027, 0, 1))
    expect(parseLastmod('x'.repeat(100))).toBeNull()
  })

  it('reads 50,000 entries in a linear scan, and no more', () => {
    verifies('fresh.sync.bounds')
    const o = 'https://shop.example'
    const xml = `<urlset>${Array.from({ length: 60_000 }, (_, i) => `<url><loc>${o}/p/${i}</loc></url>`).join('')}</urlset>`
    const t0 = performance.now()
    const entries = readEntries(xml, 'url', o)
    expect(performance.now() - t0).toBeLessThan(1000)
    expect(entries).toHaveLength(50_000)
    // An unclosed element with a huge body costs one scan, not a scan per character.
    const hostile = `<urlset>${'<url>'.repeat(200_000)}`
    const t1 = performance.now()
    expect(readEntries(hostile, 'url', o)).toEqual([])
    expect(performance.now() - t1).toBeLessThan(1000)
  })
})
