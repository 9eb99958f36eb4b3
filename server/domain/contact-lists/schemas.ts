// Shapes of the contact-list routes (decisions "Run surfaces", row "Contact lists"): lists of an agent,
// their items, and the import that fills them from CSV or JSON.
import { isSupportedCountry } from 'libphonenumber-js'
import * as v from 'valibot'
import { Cursor, Id, Limit, JsonRecord } from '~/lib/schemas'

/** Bounds of one import: the multipart body cap (middleware 02, 10 MB) and the row count (403 plan_limit_reached
 *  beyond); and of a list, its items (config contactListMaxItems, 200,000). */
export const MAX_IMPORT_ROWS = 50_000
export const MAX_LIST_ITEMS = 200_000

const Name = v.pipe(
  v.string('name must be a string.'),
  v.trim(),
  v.minLength(1, 'name must not be empty.'),
  v.maxLength(200, 'name is at most 200 characters.'),
)

const REGION_MESSAGE = 'default_region must be an ISO 3166 alpha-2 country code such as GB, or null.'
const Region = v.nullable(
  v.pipe(
    v.string(REGION_MESSAGE),
    v.regex(/^[A-Z]{2}$/, REGION_MESSAGE),
    v.check((s) => isSupportedCountry(s), REGION_MESSAGE),
    v.description('ISO 3166 alpha-2 (e.g. GB): the region national-format numbers in imports are read in'),
  ),
)

export const CreateListBody = v.strictObject({
  name: Name,
  default_region: v.optional(Region),
})
export type CreateListBody = v.InferOutput<typeof CreateListBody>

export const ListParams = v.object({ lst: Id('lst') })

export const ListListQuery = v.strictObject({
  limit: Limit(100, 50),
  cursor: Cursor,
})
export type ListListQuery = v.InferOutput<typeof ListListQuery>

export const ItemListQuery = v.strictObject({
  limit: Limit(1000, 100),
  cursor: Cursor,
})
export type ItemListQuery = v.InferOutput<typeof ItemListQuery>

export const ImportJson = v.strictObject({
  contacts: v.pipe(
    v.array(v.unknown(), 'contacts must be an array of contact objects.'),
    v.description(
      'Each {phone, name?, timezone?, variables?: {key: value}}; any other scalar key becomes a variable too.',
    ),
  ),
})
export type ImportJson = v.InferOutput<typeof ImportJson>

export const ImportMultipart = v.object({
  file: v.pipe(
    v.string(),
    v.metadata({ format: 'binary' }),
    v.description('CSV (UTF-8, optional BOM), a header row naming phone and optionally name, timezone and variables.'),
  ),
})

export const ContactList = v.object({
  list_id: v.string(),
  agent_id: v.string(),
  name: v.string(),
  default_region: v.nullable(v.string()),
  item_count: v.number(),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  updated_at: v.pipe(v.string(), v.isoTimestamp()),
})

export const ContactItem = v.object({
  item_id: v.string(),
  phone_e164: v.string(),
  name: v.nullable(v.string()),
  timezone: v.nullable(v.string()),
  variables: JsonRecord(v.string(), v.string()),
  dnc: v.boolean(),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
})

export const ImportResult = v.object({
  imported: v.number(),
  duplicates: v.number(),
  invalid: v.array(v.object({ line: v.number(), reason: v.string() })),
  list: ContactList,
})
