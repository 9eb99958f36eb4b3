// The voice session's pure pieces: the inbound history block (rule 4), the opt-out and end-phrase checks,
// the MP3 recorder, and the local engine's transfer intent that makes transfer_call reachable offline.
import { describe, expect, it } from 'vitest'
import { historyBlock, saysAny } from '~/domain/calls/session'
import { isOptOut } from '~/domain/calls/dnc'
import mp3WorkerUrl from '#svc/mp3-worker'
import { Mp3Pool } from '~/domain/calls/mp3-pool'
import { CallRecorder } from '~/domain/calls/recording'
import { callerE164, mediaToken, verifyMediaToken } from '~/domain/calls/inbound'
import local from '../../providers/chat/local'
import { verifies } from '../requirements'

describe('inbound history block', () => {
  it('holds date, outcome and summary of each call, newest first as given, and nothing when there is none', () => {
    verifies('calls.inbound-history')
    expect(historyBlock([])).toBeNull()
    const block = historyBlock([
      { date: '2026-11-20T10:00:00.000Z', outcome: 'resolved', summary: 'Asked about the Kowalski cake.' },
      { date: '2026-11-02T09:00:00.000Z', outcome: null, summary: null },
    ])!
    expect(block.split('\n')).toEqual([
      '### Previous calls with this caller (last 30 days, newest first)',
      '- 2026-11-20 (outcome: resolved): Asked about the Kowalski cake.',
      '- 2026-11-02 (outcome: unknown): no summary',
    ])
    // A long summary is cut: the block stays short whatever was imported.
    const long = historyBlock([{ date: '2026-11-20T10:00:00.000Z', outcome: 'resolved', summary: 'x'.repeat(10_000) }])!
    expect(long.length).toBeLessThan(800)
  })
})

describe('caller phrases', () => {
  it('recognises a request not to be called again, and not ordinary talk', () => {
    verifies('calls.session-rules')
    for (const yes of [
      "Please don't call me again",
      'Do not call me anymore',
      'stop calling me',
      'Never ring this number again',
      'Remove me from your calling list',
      'Put me on your do not call list',
    ])
      expect(isOptOut(yes), yes).toBe(true)
    for (const no of ['Can you call me back tomorrow?', 'When do you open?', "Don't worry, I will call you", ''])
      expect(isOptOut(no), no).toBe(false)
    // Bounded: a huge utterance is cut before the patterns run.
    const t = performance.now()
    expect(isOptOut(`${'stop '.repeat(400_000)}calling me`)).toBe(false)
    expect(performance.now() - t).toBeLessThan(1000)
  })

  it('matches end-call phrases case-insensitively as plain text', () => {
    expect(saysAny('OK, That is all for today!', ['that is all for today'])).toBe(true)
    expect(saysAny('Goodbye', ['  ', ''])).toBe(false)
    expect(saysAny('a.b', ['.*'])).toBe(false)
  })
})

describe('media token', () => {
  it('binds a media stream to one conversation under the server secret', () => {
    const token = mediaToken('s'.repeat(32), 'conv_u1')
    expect(verifyMediaToken('s'.repeat(32), 'conv_u1', token)).toBe(true)
    expect(verifyMediaToken('s'.repeat(32), 'conv_u2', token)).toBe(false)
    expect(verifyMediaToken('t'.repeat(32), 'conv_u1', token)).toBe(false)
    expect(verifyMediaToken('s'.repeat(32), 'conv_u1', 'short')).toBe(false)
  })

  it('reads caller numbers as E.164 or nothing', () => {
    expect(callerE164('+1 415 555 0142')).toBe('+14155550142')
    expect(callerE164('anonymous')).toBeNull()
    expect(callerE164('+266696687')).toBeNull()
  })
})

describe('call recorder', () => {
  it('encodes both sides as stereo MP3 on the caller clock, agent audio as it plays', async () => {
    verifies('calls.recording')
    const rate = 8000
    const pool = new Mp3Pool({ url: new URL(mp3WorkerUrl), size: 1, backlogBytes: 64 << 20 })
    try {
      const rec = new CallRecorder(rate, pool, () => {})
      const tone = new Int16Array(rate).map((_, i) => Math.round(Math.sin(i / 3) * 8000))
      rec.agentAudio(tone)
      for (let i = 0; i < 150; i++) rec.push(new Int16Array(160), i < 50 ? 160 : 0)
      const out = (await rec.finish())!
      expect(out.durationS).toBe(3)
      expect(out.mp3[0]).toBe(0xff)
      expect(out.mp3[1] & 0xe0).toBe(0xe0)
      // 24 kbit/s for 3 s is about 9 KB.
      expect(out.mp3.length).toBeGreaterThan(6_000)
      expect(out.mp3.length).toBeLessThan(14_000)
      expect(await new CallRecorder(rate, pool, () => {}).finish()).toBeNull()
    } finally {
      await pool.stop()
    }
  })
})

describe('local engine transfer intent', () => {
  const tools = [{ name: 'transfer_call', description: 'Transfer', parameters: { type: 'object' } }]
  const ask = (text: string, withTools = tools) =>
    local.complete({
      system: '## Knowledge\nWe sell bread.',
      messages: [{ role: 'user', content: text }],
      tools: withTools,
    })

  it('calls transfer_call with the destination a caller names, only when the agent has it', async () => {
    verifies('calls.session-rules')
    expect((await ask('Please transfer me to Sales')).toolCalls).toEqual([
      { name: 'transfer_call', arguments: { destination: 'Sales' } },
    ])
    expect((await ask('Can I speak to someone in billing please')).toolCalls[0].arguments).toEqual({
      destination: 'billing',
    })
    expect((await ask('Put me through to the accounts department')).toolCalls[0].arguments).toEqual({
      destination: 'accounts',
    })
    expect((await ask('Talk to you later')).toolCalls).toEqual([])
    expect((await ask('Please transfer me to Sales', [])).toolCalls).toEqual([])
  })
})
