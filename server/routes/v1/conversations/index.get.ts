import { getQuery, setResponseHeader } from 'h3'
import * as v from 'valibot'
import { defineApiRoute } from '~/http/define-api-route'
import { meta } from '~/http/envelope'
import { ConversationOut, LIST_REPEATABLE, ListQuery } from '~/domain/conversations/schemas'
import {
  LIST_DEFAULT_INCLUDE,
  LIST_INCLUDES,
  checkBackfill,
  checkSummariesOnly,
  listConversationsJs,
  listConversationsJson,
  needsBackfill,
  parseInclude,
} from '~/domain/conversations/list'

// Bench-only switch (bench/conversations.mjs): map rows in JavaScript instead of letting PostgreSQL build the JSON.
const MAP_IN_JS = process.env.SVC_BENCH_LIST_JSON === 'js'

export default defineApiRoute({
  summary: 'List conversations',
  description:
    'One normalised object per conversation across all channels, soft-deleted ones excluded. Without from, to or updated_since the last 30 days apply ' +
    '(meta.applied_default_range true, the window echoed in meta.from and meta.to). from older than 30 days, to without from, or limit above 200 needs conversations:backfill ' +
    'and is metered in the backfill class. include is a CSV of summary, identity, metrics and analysis (default summary,identity). A key with only summaries:read may list with include=summary only. Keyset pages; next_cursor is bound to the ' +
    'filters, sort, limit and credential.',
  tags: ['Conversations'],
  scope: 'conversations:read',
  anyScope: ['summaries:read'],
  dataRoute: true,
  rateClass: { classes: ['read', 'backfill'], pick: (event) => (needsBackfill(getQuery(event)) ? 'backfill' : 'read') },
  query: ListQuery,
  repeatable: LIST_REPEATABLE,
  raw: true,
  response: v.object({ data: v.array(ConversationOut) }),
  errors: ['invalid_date', 'invalid_date_range', 'invalid_cursor', 'invalid_limit', 'unsupported_filter', 'invalid_id'],
  async handler({ event, runtime, principal, keyset, account, query }) {
    const include = parseInclude(query.include, LIST_INCLUDES, LIST_DEFAULT_INCLUDE)
    checkSummariesOnly(principal, include)
    checkBackfill(principal, query)
    const { cursor, limit, sort, ...filters } = query
    const page = await keyset({
      filters: { ...filters, account_ids: account.ids },
      sort,
      limit,
      cursor,
    })
    const list = MAP_IN_JS ? listConversationsJs : listConversationsJson
    const p = await list(runtime.database, account.ids, query, include, page)
    // The envelope around PostgreSQL's JSON text, without parsing it again.
    setResponseHeader(event, 'Content-Type', 'application/json')
    const pagination = JSON.stringify({ limit: p.limit, has_more: p.hasMore, next_cursor: p.nextCursor })
    return `{"data":${p.dataJson},"pagination":${pagination},"meta":${JSON.stringify(meta(event, p.meta))}}`
  },
})
