// Shapes of the operator surface (issue 18), shared by its routes.
import * as v from 'valibot'
import { Cursor, Limit } from '~/lib/schemas'

export const AdminAction = v.object({
  action_id: v.pipe(v.string(), v.description('act_<n>')),
  action: v.pipe(v.string(), v.description('What was done, e.g. customer.wallet.credit, agent.pause, config.update')),
  target: v.nullable(v.pipe(v.string(), v.description('The id it was done to (usr_, agt_, key_…), or null'))),
  params: v.record(v.string(), v.unknown()),
  request_id: v.string(),
  created_at: v.string(),
})

export const AdminActionQuery = v.object({
  action: v.optional(v.pipe(v.string(), v.maxLength(100))),
  target: v.optional(v.pipe(v.string(), v.maxLength(100))),
  limit: Limit(100, 50),
  cursor: Cursor,
})
