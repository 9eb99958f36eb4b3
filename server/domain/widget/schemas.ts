// The public widget API's bodies and answers (issue 17): validated and documented from one declaration.
import * as v from 'valibot'
import { Utm } from '~/domain/conversations/chat-schemas'
import { JsonRecord } from '~/lib/schemas'
import { AppearanceOut } from '~/domain/agents/schemas'
import { MessageOut } from '~/domain/conversations/chat-schemas'
import { ConversationId } from '~/domain/conversations/schemas'

export const WIDGET_EVENT_TYPES = [
  'widget.loaded',
  'widget.opened',
  'widget.closed',
  'message.shown',
  'link.clicked',
] as const
export type WidgetEventType = (typeof WIDGET_EVENT_TYPES)[number]

/** Browser-side event data is bounded: at most this many bytes of JSON. */
export const WIDGET_EVENT_DATA_MAX_BYTES = 2048

/** POST /widget/conversations: the browser's language and the host page's utm_* parameters (/widget.js sends both). */
export const WidgetConversationBody = v.strictObject({
  language: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/, 'language is a BCP-47 tag such as en or fr-CA.'),
      v.maxLength(35),
      v.description(
        "The visitor's language (BCP-47, the browser's navigator.language): picks greetings[chat][language].",
      ),
    ),
  ),
  utm: v.optional(Utm),
})
export type WidgetConversationBody = v.InferOutput<typeof WidgetConversationBody>

export const WidgetMessageBody = v.strictObject({
  text: v.pipe(
    v.string('text is required.'),
    v.minLength(1, 'text must not be empty.'),
    v.maxLength(10_000, 'text is at most 10000 characters.'),
  ),
})
export type WidgetMessageBody = v.InferOutput<typeof WidgetMessageBody>

const EventData = v.pipe(
  JsonRecord(v.string(), v.unknown(), 'data must be an object.'),
  v.check(
    (d) => Buffer.byteLength(JSON.stringify(d), 'utf8') <= WIDGET_EVENT_DATA_MAX_BYTES,
    `data is at most ${WIDGET_EVENT_DATA_MAX_BYTES} bytes of JSON.`,
  ),
)

export const WidgetEventBody = v.strictObject({
  type: v.picklist(WIDGET_EVENT_TYPES, `type is one of ${WIDGET_EVENT_TYPES.join(', ')}.`),
  conversation_id: v.optional(ConversationId),
  data: v.optional(EventData),
})
export type WidgetEventBody = v.InferOutput<typeof WidgetEventBody>

export const WidgetConversationParams = v.object({ conv: ConversationId })

export const WidgetConversation = v.object({
  conversation_id: v.string(),
  visitor_token: v.pipe(v.string(), v.description('Shown once; send it as X-Svc-Visitor-Token with each message.')),
  greeting: v.string(),
  appearance: AppearanceOut,
})

/** GET /widget/config: what the script paints before it mounts (every appearance key, null when unset). */
export const WidgetConfig = v.object({
  appearance: AppearanceOut,
  greeting: v.pipe(v.string(), v.description('The greeting a new conversation starts with (its turn 0).')),
})

/** The API's message answer without `usage` (tokens and model are the account's business, not the visitor's). */
export const WidgetMessageAnswer = v.object({ turn: MessageOut.entries.turn, turns: MessageOut.entries.turns })
