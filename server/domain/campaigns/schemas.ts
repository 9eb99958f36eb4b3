// Shapes of the campaign routes (decisions "Run surfaces", row "Campaigns"): an agent's profile dialling a
// contact list (cmp_<n>) inside a weekly schedule window, its progress and its per-contact rows.
import * as v from 'valibot'
import { VoicemailPolicy } from '~/domain/calls/outbound-schemas'
import { ianaZone } from '~/domain/contact-lists/rows'
import { Cursor, Id, Limit, JsonRecord } from '~/lib/schemas'

export const CAMPAIGN_STATUSES = ['draft', 'running', 'paused', 'stopped', 'completed'] as const
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number]

export const CONTACT_STATUSES = ['pending', 'in_progress', 'completed', 'no_answer', 'failed', 'dnc_skipped'] as const
export type ContactStatus = (typeof CONTACT_STATUSES)[number]

export const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const
export type Day = (typeof DAYS)[number]

export const MAX_CONCURRENT = 50
export const MAX_ATTEMPTS = 10
/** One week. */
export const MAX_RETRY_DELAY_MINUTES = 10_080
export const DEFAULT_RETRY_DELAY_MINUTES = 60

const Name = v.pipe(
  v.string('name must be a string.'),
  v.trim(),
  v.minLength(1, 'name must not be empty.'),
  v.maxLength(200, 'name is at most 200 characters.'),
)

const ZONE_MESSAGE = 'schedule.timezone must be an IANA time zone such as Europe/London.'
const Timezone = v.pipe(
  v.string(ZONE_MESSAGE),
  v.check((s) => ianaZone(s) !== null, ZONE_MESSAGE),
  v.transform((s) => ianaZone(s) as string),
  v.description('IANA time zone (stored in its canonical spelling), e.g. Europe/London'),
)

const DAYS_MESSAGE = 'schedule.days must be a non-empty array of distinct days from mon, tue, wed, thu, fri, sat, sun.'
const Days = v.pipe(
  v.array(v.picklist(DAYS, DAYS_MESSAGE), DAYS_MESSAGE),
  v.minLength(1, DAYS_MESSAGE),
  v.check((days) => new Set(days).size === days.length, DAYS_MESSAGE),
)

const START_MESSAGE = 'schedule.start must be a 24-hour time HH:MM from 00:00 to 23:59.'
const END_MESSAGE = 'schedule.end must be a 24-hour time HH:MM from 00:01 to 24:00 (exclusive).'
const Start = v.pipe(
  v.string(START_MESSAGE),
  v.regex(/^([01]\d|2[0-3]):[0-5]\d$/, START_MESSAGE),
  v.description('HH:MM, 24-hour, in schedule.timezone'),
)
const End = v.pipe(
  v.string(END_MESSAGE),
  v.regex(/^(([01]\d|2[0-3]):[0-5]\d|24:00)$/, END_MESSAGE),
  v.description('HH:MM, 24-hour, exclusive; 24:00 is the end of the day'),
)

export const Schedule = v.pipe(
  v.strictObject(
    { timezone: Timezone, days: Days, start: Start, end: End },
    'schedule must be an object {timezone, days, start, end}.',
  ),
  // HH:MM strings compare as times ("24:00" after every other).
  v.forward(
    v.partialCheck(
      [['start'], ['end']],
      (s) => s.start < s.end,
      'schedule.end must be later than schedule.start (windows do not cross midnight).',
    ),
    ['end'],
  ),
)
export type Schedule = v.InferOutput<typeof Schedule>

const integer = (field: string, min: number, max: number) =>
  v.pipe(
    v.number(`${field} must be an integer from ${min} to ${max}.`),
    v.integer(`${field} must be an integer from ${min} to ${max}.`),
    v.minValue(min, `${field} must be an integer from ${min} to ${max}.`),
    v.maxValue(max, `${field} must be an integer from ${min} to ${max}.`),
  )

const RETRY_MESSAGE = `retry_delay_minutes must be a number from 0 to ${MAX_RETRY_DELAY_MINUTES}.`
const RetryDelay = v.pipe(
  v.number(RETRY_MESSAGE),
  v.finite(RETRY_MESSAGE),
  v.minValue(0, RETRY_MESSAGE),
  v.maxValue(MAX_RETRY_DELAY_MINUTES, RETRY_MESSAGE),
)

export const CreateCampaignBody = v.strictObject({
  agent_id: Id('agt'),
  profile_id: Id('prf'),
  list_id: Id('lst'),
  name: Name,
  schedule: Schedule,
  max_concurrent: v.optional(integer('max_concurrent', 1, MAX_CONCURRENT), 1),
  max_attempts: v.optional(integer('max_attempts', 1, MAX_ATTEMPTS), 1),
  retry_delay_minutes: v.optional(RetryDelay, DEFAULT_RETRY_DELAY_MINUTES),
  voicemail_policy: VoicemailPolicy,
})
export type CreateCampaignBody = v.InferOutput<typeof CreateCampaignBody>

export const CampaignParams = v.object({ cmp: Id('cmp') })

export const CampaignListQuery = v.strictObject({
  agent_id: v.optional(Id('agt')),
  status: v.optional(v.picklist(CAMPAIGN_STATUSES, `status is one of ${CAMPAIGN_STATUSES.join(', ')}.`)),
  limit: Limit(100, 50),
  cursor: Cursor,
})
export type CampaignListQuery = v.InferOutput<typeof CampaignListQuery>

export const ContactListQuery = v.strictObject({
  status: v.optional(v.picklist(CONTACT_STATUSES, `status is one of ${CONTACT_STATUSES.join(', ')}.`)),
  limit: Limit(1000, 100),
  cursor: Cursor,
})
export type ContactListQuery = v.InferOutput<typeof ContactListQuery>

export const Progress = v.object({
  total: v.number(),
  pending: v.number(),
  in_progress: v.number(),
  completed: v.number(),
  no_answer: v.number(),
  failed: v.number(),
  dnc_skipped: v.number(),
  outcomes: v.pipe(JsonRecord(v.string(), v.number()), v.description('Contacts per non-null outcome')),
})
export type Progress = v.InferOutput<typeof Progress>

export const Campaign = v.object({
  campaign_id: v.string(),
  agent_id: v.string(),
  profile_id: v.string(),
  list_id: v.string(),
  name: v.string(),
  status: v.picklist(CAMPAIGN_STATUSES),
  schedule: v.object({
    timezone: v.string(),
    days: v.array(v.picklist(DAYS)),
    start: v.string(),
    end: v.string(),
  }),
  max_concurrent: v.number(),
  max_attempts: v.number(),
  retry_delay_minutes: v.number(),
  progress: Progress,
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  updated_at: v.pipe(v.string(), v.isoTimestamp()),
  started_at: v.nullable(v.pipe(v.string(), v.isoTimestamp())),
  finished_at: v.nullable(v.pipe(v.string(), v.isoTimestamp())),
})
export type Campaign = v.InferOutput<typeof Campaign>

export const CampaignContact = v.object({
  item_id: v.string(),
  phone_e164: v.string(),
  status: v.picklist(CONTACT_STATUSES),
  attempts: v.number(),
  last_call_id: v.nullable(v.string()),
  outcome: v.nullable(v.string()),
  next_attempt_at: v.nullable(v.pipe(v.string(), v.isoTimestamp())),
})
