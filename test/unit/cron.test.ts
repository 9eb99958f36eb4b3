// The jobs' cron (server/jobs/_cron.ts): which minutes a schedule matches, and which jobs a slot sends, with
// and without the shared slot of PostgreSQL (decisions "Issue 36: idle, the minute sweeps").
import { afterEach, describe, expect, it, vi } from 'vitest'
import { parseCron, startCron } from '~/jobs/_cron'
import { runsHere } from '~/jobs/_queue'
import { verifies } from '../requirements'

const at = (iso: string) => new Date(iso)

describe('parseCron', () => {
  it('matches the schedules the jobs use, in UTC', () => {
    verifies('jobs.cron')
    expect(parseCron('* * * * *')(at('2026-03-01T10:07:00Z'))).toBe(true)
    const hourly = parseCron('17 * * * *')
    expect(hourly(at('2026-03-01T10:17:00Z'))).toBe(true)
    expect(hourly(at('2026-03-01T10:18:00Z'))).toBe(false)
    const daily = parseCron('41 3 * * *')
    expect(daily(at('2026-03-01T03:41:00Z'))).toBe(true)
    expect(daily(at('2026-03-01T04:41:00Z'))).toBe(false)
    const tens = parseCron('*/10 * * * *')
    expect([0, 10, 50].every((m) => tens(at(`2026-03-01T10:${String(m).padStart(2, '0')}:00Z`)))).toBe(true)
    expect(tens(at('2026-03-01T10:05:00Z'))).toBe(false)
    // Lists, ranges with steps, Sunday as 7; both day fields restricted: either matches.
    const mixed = parseCron('0,30 8-18/2 1 * 7')
    expect(mixed(at('2026-03-01T08:30:00Z'))).toBe(true) // the 1st (and a Sunday)
    expect(mixed(at('2026-03-08T10:00:00Z'))).toBe(true) // a Sunday
    expect(mixed(at('2026-03-09T10:00:00Z'))).toBe(false) // a Monday, not the 1st
    expect(mixed(at('2026-03-08T09:00:00Z'))).toBe(false) // 9 is not in 8-18/2
    for (const bad of ['* * * *', '60 * * * *', 'MON * * * *', '5-1 * * * *', '*/0 * * * *'])
      expect(() => parseCron(bad), bad).toThrow()
  })
})

describe('startCron', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('sends each job in the slots it is due, from the next slot on, with one timer a due slot', async () => {
    verifies('jobs.cron')
    vi.useFakeTimers({ now: at('2026-03-01T10:16:30Z') })
    const sent: string[] = []
    const cron = startCron({
      jobs: [
        { name: 'minute', schedule: '* * * * *' },
        { name: 'hourly', schedule: '17 * * * *' },
      ],
      send: async (name) => {
        sent.push(`${new Date().toISOString().slice(11, 16)} ${name}`)
      },
      log: () => {},
    })
    await vi.advanceTimersByTimeAsync(150_000)
    expect(sent).toEqual(['10:17 minute', '10:17 hourly', '10:18 minute', '10:19 minute'])
    cron.stop()
    await vi.advanceTimersByTimeAsync(120_000)
    expect(sent).toHaveLength(4)
  })

  it('waits for the next due slot only (an hourly job: no wake-up in between)', async () => {
    verifies('jobs.cron')
    vi.useFakeTimers({ now: at('2026-03-01T10:18:00Z') })
    const sent: string[] = []
    let claims = 0
    const cron = startCron({
      jobs: [{ name: 'hourly', schedule: '17 * * * *' }],
      send: async (name) => void sent.push(name),
      claim: async () => {
        claims++
        return null
      },
      log: () => {},
    })
    expect(vi.getTimerCount()).toBe(1)
    await vi.advanceTimersByTimeAsync(58 * 60_000)
    expect(claims).toBe(0)
    await vi.advanceTimersByTimeAsync(60_000)
    expect(sent).toEqual(['hourly'])
    expect(claims).toBe(1)
    cron.stop()
  })

  it('with a shared slot: sends only the slots it moved, including ones no instance sent', async () => {
    verifies('jobs.cron')
    vi.useFakeTimers({ now: at('2026-03-01T10:16:30Z') })
    const minute = 60_000
    let shared = at('2026-03-01T10:14:00Z').getTime()
    const sent: string[] = []
    const cron = startCron({
      jobs: [
        { name: 'minute', schedule: '* * * * *' },
        { name: 'at15', schedule: '15 * * * *' },
      ],
      send: async (name) => void sent.push(name),
      claim: async (slot) => {
        if (shared >= slot) return undefined
        const prev = shared
        shared = slot
        return prev
      },
      log: () => {},
    })
    // 10:17: the slots 10:15 to 10:17 were nobody's: each job once.
    await vi.advanceTimersByTimeAsync(31_000)
    expect(sent.sort()).toEqual(['at15', 'minute'])
    // 10:18 taken by another instance first: nothing here.
    shared = at('2026-03-01T10:18:00Z').getTime()
    await vi.advanceTimersByTimeAsync(minute)
    expect(sent).toHaveLength(2)
    await vi.advanceTimersByTimeAsync(minute)
    expect(sent).toEqual(['at15', 'minute', 'minute'])
    cron.stop()
  })
})

describe('runsHere', () => {
  it('PGlite runs every scheduled job here; PostgreSQL only the minute sweeps that are not chains', () => {
    verifies('jobs.local-sweeps')
    const job = (schedule?: string, policy?: 'short') => ({ name: 'x', schedule, policy, run: async () => {} })
    expect(runsHere(job('* * * * *'), false)).toBe(true)
    expect(runsHere(job('41 3 * * *'), false)).toBe(true)
    expect(runsHere(job(), false)).toBe(false)
    expect(runsHere(job('* * * * *'), true)).toBe(true)
    expect(runsHere(job('* * * * *', 'short'), true)).toBe(false)
    expect(runsHere(job('17 * * * *'), true)).toBe(false)
    expect(runsHere(job(), true)).toBe(false)
  })
})
