import * as v from 'valibot'
import { Cursor, Id, Limit } from '~/lib/schemas'
import { PLANS } from '~/domain/limits/plans'
import { Email, ExternalIds, Text } from '~/domain/users/schemas'

/** POST /partners/members: the member's user and account (decisions "Partners"). */
export const MemberCreate = v.strictObject({
  email: Email,
  name: v.optional(Text(200)),
  company_name: v.optional(Text(200)),
  plan: v.optional(v.picklist(PLANS, 'plan must be trial or starter.'), 'trial'),
  external_ids: v.optional(ExternalIds),
})
export type MemberCreate = v.InferOutput<typeof MemberCreate>

export const MemberParams = v.object({ usr: Id('usr') })

export const MemberListQuery = v.object({
  limit: Limit(100, 50),
  cursor: Cursor,
})
