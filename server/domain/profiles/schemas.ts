// Shapes of the outbound profile routes (decisions "Run surfaces", row "Profiles"): a stored outbound role
// of an agent (prf_<n>). variables[] is read-only: derived from the {{name}} placeholders of role and
// greeting (placeholders.ts), never sent by the client.
import * as v from 'valibot'
import { Build } from '~/domain/builds/schemas'
import { VoicemailPolicy } from '~/domain/calls/outbound-schemas'
import { Cursor, Id, Limit } from '~/lib/schemas'
import { MAX_GREETING, MAX_ROLE, MAX_VARIABLES, placeholdersOf } from './placeholders'

export const MAX_NAME = 200
export const MAX_GOAL = 2000
export const MAX_CAPABILITIES = 20
export const MIN_CALL_S = 30
export const MAX_CALL_S = 3600
export const DEFAULT_CALL_S = 600

const tooMany = (s: string) => placeholdersOf(s).length <= MAX_VARIABLES
const manyMessage = (field: string) => `${field} holds more than ${MAX_VARIABLES} distinct {{variables}}.`

const Name = v.pipe(
  v.string('name must be a string.'),
  v.trim(),
  v.minLength(1, 'name is required.'),
  v.maxLength(MAX_NAME, `name is at most ${MAX_NAME} characters.`),
)
// Lengths are checked before any placeholder scan (the pipe stops at the first failed length).
const Role = v.pipe(
  v.string('role must be a string.'),
  v.maxLength(MAX_ROLE, `role is at most ${MAX_ROLE} characters.`),
  v.trim(),
  v.minLength(1, 'role is required.'),
  v.check(tooMany, manyMessage('role')),
  v.description('Who the agent is on the call; {{name}} placeholders are filled from the call variables.'),
)
const Goal = v.nullable(
  v.pipe(
    v.string('goal must be a string or null.'),
    v.trim(),
    v.maxLength(MAX_GOAL, `goal is at most ${MAX_GOAL} characters.`),
  ),
)
const Greeting = v.nullable(
  v.pipe(
    v.string('greeting must be a string or null.'),
    v.maxLength(MAX_GREETING, `greeting is at most ${MAX_GREETING} characters.`),
    v.trim(),
    v.check(tooMany, manyMessage('greeting')),
    v.description('First words of the call; {{name}} placeholders are filled from the call variables.'),
  ),
)
const Capabilities = v.pipe(
  v.array(v.pipe(v.string('capabilities holds capability names.'), v.maxLength(100)), 'capabilities must be an array.'),
  v.maxLength(MAX_CAPABILITIES, `capabilities holds at most ${MAX_CAPABILITIES} names.`),
  v.description('Names from GET /outbound-capabilities.'),
)
const MaxCall = v.pipe(
  v.number('max_call_duration_s must be an integer.'),
  v.integer('max_call_duration_s must be an integer.'),
  v.minValue(MIN_CALL_S, `max_call_duration_s is at least ${MIN_CALL_S}.`),
  v.maxValue(MAX_CALL_S, `max_call_duration_s is at most ${MAX_CALL_S}.`),
)

export const CreateProfileBody = v.strictObject({
  name: Name,
  role: Role,
  goal: v.optional(Goal, null),
  greeting: v.optional(Greeting, null),
  capabilities: v.optional(Capabilities, []),
  voicemail_policy: VoicemailPolicy,
  max_call_duration_s: v.optional(MaxCall, DEFAULT_CALL_S),
})
export type CreateProfileBody = v.InferOutput<typeof CreateProfileBody>

export const PatchProfileBody = v.strictObject({
  name: v.optional(Name),
  role: v.optional(Role),
  goal: v.optional(Goal),
  greeting: v.optional(Greeting),
  capabilities: v.optional(Capabilities),
  voicemail_policy: VoicemailPolicy,
  max_call_duration_s: v.optional(MaxCall),
})
export type PatchProfileBody = v.InferOutput<typeof PatchProfileBody>

export const ProfileParams = v.object({ prf: Id('prf') })

export const ProfileListQuery = v.strictObject({
  limit: Limit(100, 50),
  cursor: Cursor,
})
export type ProfileListQuery = v.InferOutput<typeof ProfileListQuery>

export const Profile = v.object({
  profile_id: v.string(),
  agent_id: v.string(),
  name: v.string(),
  role: v.string(),
  goal: v.nullable(v.string()),
  greeting: v.nullable(v.string()),
  variables: v.array(v.string()),
  capabilities: v.array(v.string()),
  max_call_duration_s: v.number(),
  status: v.picklist(['draft', 'ready']),
  prompt_version: v.nullable(v.string()),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  updated_at: v.pipe(v.string(), v.isoTimestamp()),
})
export type Profile = v.InferOutput<typeof Profile>

/** The agent build object plus the profile it builds (steps: instructions only). */
export const ProfileBuild = v.object({ ...Build.entries, profile_id: v.string() })
export type ProfileBuild = v.InferOutput<typeof ProfileBuild>
