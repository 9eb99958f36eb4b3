// The pure parts of the streaming voice loop: cutting a streamed answer into pieces for synthesis, and the
// caller-side segmentation (utterance start, barge-in threshold, speculation point, end of speech) on the
// caller's clock.
import { describe, expect, it } from 'vitest'
import { Listener, type ListenEvent } from '~/domain/voice-loop/listen'
import { SentenceSplitter } from '~/domain/voice-loop/sentences'

/** Streams `text` into a splitter `step` characters at a time; answers the pieces and the flushed rest. */
function split(text: string, step = 1) {
  const s = new SentenceSplitter()
  const pieces: string[] = []
  for (let i = 0; i < text.length; i += step) pieces.push(...s.push(text.slice(i, i + step)))
  return { pieces, rest: s.flush() }
}

describe('SentenceSplitter', () => {
  it('cuts at sentence ends only once the next character is seen, never inside a number or after an abbreviation', () => {
    const { pieces, rest } = split('A loaf costs $29.99 today. We open at 9. Mr. Smith bakes e.g. rye! Really?! Yes.')
    expect(pieces).toEqual(['A loaf costs $29.99 today.', 'We open at 9.', 'Mr. Smith bakes e.g. rye!', 'Really?!'])
    expect(rest).toEqual(['Yes.'])
  })

  it('holds "$29." at the end of what has arrived until it knows the digits are not coming', () => {
    const s = new SentenceSplitter()
    expect(s.push('It costs $29.')).toEqual([])
    expect(s.push('99 now. ')).toEqual(['It costs $29.99 now.'])
    expect(s.push('Thanks')).toEqual([])
    expect(s.flush()).toEqual(['Thanks'])
  })

  it('keeps closing quotes and brackets with their sentence, and cuts at a line break', () => {
    const { pieces, rest } = split('He said "yes." Then he left (quickly.) Done\nNext line')
    expect(pieces).toEqual(['He said "yes."', 'Then he left (quickly.)', 'Done'])
    expect(rest).toEqual(['Next line'])
  })

  it('cuts a long sentence at its last clause mark, and a run-on one at a word boundary', () => {
    const clause = 'When you come to the bakery on a weekday morning, ask for the rye sourdough that we bake at dawn'
    const { pieces } = split(`${clause} and you will not regret it`, 7)
    expect(pieces[0]).toBe('When you come to the bakery on a weekday morning,')
    const runOn = 'word '.repeat(80)
    const out = split(runOn, 5)
    expect(out.pieces.length).toBeGreaterThanOrEqual(1)
    for (const p of out.pieces) expect(p.length).toBeLessThanOrEqual(240)
    expect([...out.pieces, ...out.rest].join(' ')).toBe(runOn.trim())
  })

  it('loses no text, whatever the chunking', () => {
    const text = 'First. Second one, with a clause; and more! Third?\nFourth line. $3.50 each. The end'
    for (const step of [1, 2, 3, 7, 50]) {
      const { pieces, rest } = split(text, step)
      expect([...pieces, ...rest].join(' ').replace(/\s+/g, ' ')).toBe(text.replace(/\s+/g, ' '))
    }
  })

  it('after a failure says only a whole sentence, never a fragment', () => {
    const whole = new SentenceSplitter()
    whole.push('We bake rye every morning.')
    expect(whole.flushComplete()).toEqual(['We bake rye every morning.'])
    const fragment = new SentenceSplitter()
    fragment.push('We bake rye every')
    expect(fragment.flushComplete()).toEqual([])
  })
})

const RATE = 8000
const FRAME = 160
const voiced = () => Int16Array.from({ length: FRAME }, (_, i) => Math.round(6000 * Math.sin(i / 3)))
const silent = () => new Int16Array(FRAME)

/** Feeds frames (true = speech) to a listener; answers the events with the frame index they came on. */
function listen(l: Listener, frames: boolean[], strict = false, start = 0) {
  const events: (ListenEvent & { at: number })[] = []
  let clock = start
  frames.forEach((v, at) => {
    clock += FRAME
    const e = l.push(v ? voiced() : silent(), clock, strict)
    if (e) events.push({ ...e, at })
  })
  return events
}
const run = (n: number, v: boolean) => Array<boolean>(n).fill(v)

describe('Listener', () => {
  it('starts, confirms after 200 ms of speech, speculates at the speculation point and ends after end_of_speech_ms', () => {
    const l = new Listener({ rate: RATE, endOfSpeechMs: 500, speculateAfterMs: 250 })
    const events = listen(l, [...run(30, true), ...run(30, false)])
    expect(events.map((e) => [e.type, e.at])).toEqual([
      ['start', 0],
      ['confirmed', 9],
      ['speculate', 42],
      ['end', 54],
    ])
    const end = events.at(-1) as Extract<ListenEvent, { type: 'end' }>
    expect(end.utterance.voicedSamples).toBe(30 * FRAME)
    expect(end.utterance.lastVoicedSample).toBe(30 * FRAME)
    expect(l.utterance).toBeNull()
  })

  it('a pause shorter than end_of_speech_ms is one utterance (speculation may run, the end waits)', () => {
    const l = new Listener({ rate: RATE, endOfSpeechMs: 500, speculateAfterMs: 250 })
    const events = listen(l, [...run(20, true), ...run(15, false), ...run(20, true), ...run(30, false)])
    expect(events.filter((e) => e.type === 'end')).toHaveLength(1)
    expect(events.filter((e) => e.type === 'speculate').map((e) => e.at)).toEqual([32, 67])
    const end = events.find((e) => e.type === 'end') as Extract<ListenEvent, { type: 'end' }>
    expect(end.utterance.voicedSamples).toBe(40 * FRAME)
  })

  it('over the agent (strict), a burst shorter than the barge-in threshold is dropped; a longer one counts', () => {
    const l = new Listener({ rate: RATE, endOfSpeechMs: 500, speculateAfterMs: null })
    expect(listen(l, [...run(5, true), ...run(3, false)], true).map((e) => e.type)).toEqual(['start', 'dropped'])
    expect(l.utterance).toBeNull()
    const long = listen(l, [...run(12, true), ...run(30, false)], true)
    expect(long.map((e) => e.type)).toEqual(['start', 'confirmed', 'end'])
  })

  it('noise shorter than 120 ms is not an utterance; endNow answers the open utterance once', () => {
    const l = new Listener({ rate: RATE, endOfSpeechMs: 300, speculateAfterMs: null })
    expect(listen(l, [...run(3, true), ...run(20, false)]).map((e) => e.type)).toEqual(['start'])
    listen(l, run(10, true))
    const u = l.endNow()
    expect(u?.voicedSamples).toBe(10 * FRAME)
    expect(l.endNow()).toBeNull()
  })
})
