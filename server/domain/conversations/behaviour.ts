// What the agent's runtime settings change in a turn, on every surface and with every engine (decisions
// "Behaviour: every stored setting acts"): business hours, a visitor asking for a person, small talk, the
// fallback, contact details the visitor states, and the greeting per surface and language. Pure: text and
// settings in, decisions out; the turn code (messages.ts, the voice loop) acts on them.
import type { AgentRow } from '~/domain/agents/rows'

export { smallTalkAnswer, smallTalkOf, statedContact, wantsPerson, type SmallTalk } from '~/lib/cues'

/** Said on a handoff when the agent has no escalation_message. */
export const DEFAULT_ESCALATION =
  "I'm passing this conversation to a member of our team, who will get back to you as soon as possible."
/** Asked in the first answer with collect_identity while the visitor is unknown. */
export const ASK_IDENTITY =
  'So that we can get back to you if needed, may I have your name and an e-mail address or phone number?'

const setting = (agent: Pick<AgentRow, 'settings'>, key: string): string | null => {
  const v = agent.settings?.[key]
  return typeof v === 'string' && v.trim() ? v : null
}

export const fallbackMessage = (agent: Pick<AgentRow, 'settings'>) => setting(agent, 'fallback_message')
export const escalationMessage = (agent: Pick<AgentRow, 'settings'>) =>
  setting(agent, 'escalation_message') ?? DEFAULT_ESCALATION
export const afterHoursMessage = (agent: Pick<AgentRow, 'settings'>) => setting(agent, 'after_hours_message')

// ---- Business hours -----------------------------------------------------------------------------------------
export const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const
const HHMM = /^(?:[01]\d|2[0-3]):[0-5]\d$|^24:00$/
/** At most this many opening intervals a day. */
const MAX_INTERVALS = 12

const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3))

/** Why a business_hours value is not {mon…sun: [["HH:MM","HH:MM"], …]}, or null when it is. */
export function businessHoursProblem(value: unknown): string | null {
  if (value === null) return null
  if (typeof value !== 'object' || Array.isArray(value)) return 'business_hours is an object of days, or null.'
  for (const [day, intervals] of Object.entries(value as Record<string, unknown>)) {
    if (!(DAYS as readonly string[]).includes(day))
      return `business_hours keys are ${DAYS.join(', ')}; not ${day.slice(0, 20)}.`
    if (!Array.isArray(intervals) || intervals.length > MAX_INTERVALS)
      return `business_hours.${day} is a list of at most ${MAX_INTERVALS} ["HH:MM", "HH:MM"] pairs.`
    for (const pair of intervals) {
      if (!Array.isArray(pair) || pair.length !== 2 || !pair.every((p) => typeof p === 'string' && HHMM.test(p)))
        return `business_hours.${day} holds ["HH:MM", "HH:MM"] pairs (24-hour clock; "24:00" may close a day).`
      if (pair[0] === '24:00' || minutes(pair[0]) >= minutes(pair[1]))
        return `business_hours.${day}: each pair opens before it closes.`
    }
  }
  return null
}

const clockIn = (timezone: string, at: Date) => {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: timezone,
    weekday: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at)
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? ''
  return { day: get('weekday').slice(0, 3).toLowerCase(), minute: Number(get('hour')) * 60 + Number(get('minute')) }
}

/** Whether the agent is open at `at` (its business_hours in its timezone; none set: always open). */
export function isOpen(agent: Pick<AgentRow, 'settings'>, at = new Date()): boolean {
  const hours = agent.settings?.business_hours
  if (hours === null || hours === undefined || businessHoursProblem(hours)) return true
  const tz = typeof agent.settings?.timezone === 'string' ? agent.settings.timezone : 'UTC'
  let now: { day: string; minute: number }
  try {
    now = clockIn(tz, at)
  } catch {
    now = clockIn('UTC', at)
  }
  const today = (hours as Record<string, [string, string][]>)[now.day] ?? []
  return today.some(([open, close]) => now.minute >= minutes(open) && now.minute < minutes(close))
}

// ---- Greetings per surface and language ------------------------------------------------------------------------
export type GreetingSurface = 'phone' | 'chat' | 'voice_chat'

/** greetings[surface][language], then its primary subtag, then greetings[surface][default_language]. */
export function greetingFor(
  agent: Pick<AgentRow, 'settings'>,
  surface: GreetingSurface,
  language: string | null,
): string | null {
  const all = agent.settings?.greetings
  const bySurface = all && typeof all === 'object' ? (all as Record<string, unknown>)[surface] : null
  if (!bySurface || typeof bySurface !== 'object') return null
  const table = bySurface as Record<string, unknown>
  const fallback = typeof agent.settings?.default_language === 'string' ? agent.settings.default_language : null
  for (const tag of [language, language?.split('-')[0], fallback, fallback?.split('-')[0]]) {
    const text = tag ? table[tag] : null
    if (typeof text === 'string' && text.trim()) return text.trim()
  }
  return null
}
