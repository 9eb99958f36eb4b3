// Partners (issue 18): a partner is a user whose personal key holds partners:manage. It provisions members
// (a user and an account each, users.partner_id naming the partner), reads and lists its own members only,
// and reaches their accounts through the ordinary routes: the partner key's principal lists its members'
// accounts (credentials/keys.ts, memberAccountIds), so a member is reachable from the next request on.
import { and, eq } from 'drizzle-orm'
import type { Database } from '~/db/client'
import { users } from '~/db/schema'
import { Errors } from '~/lib/errors'
import type { KeysetRequest } from '~/lib/keyset'
import type { Principal } from '~/domain/credentials/principal'
import { createUser, findUser, pageUsers } from '~/domain/users/users'
import type { User } from '~/domain/users/schemas'
import type { MemberCreate } from './schemas'

/** The partner's user id. Route scope partners:manage is only ever held by personal keys. */
function partnerOf(principal: Principal): string {
  if (principal.type === 'master' || !principal.userId)
    throw Errors.forbiddenAccount('Partner routes act for a partner: use the partner user’s own key.')
  return principal.userId
}

export async function createMember(database: Database, principal: Principal, input: MemberCreate): Promise<User> {
  const partnerId = partnerOf(principal)
  // Same transaction as POST /users (user, account, subscription); currency defaults like there.
  const member = await createUser(database, { ...input, currency_code: 'USD' }, { partnerId })
  // The partner's cached principals must list the new account before this answers (other instances: the
  // svc_invalidate call inside the creating transaction).
  await database.bus.publish([`user:${partnerId}`])
  return member
}

/** Another partner's member, an ordinary user and an unknown id all answer 404. */
export function getMember(database: Database, principal: Principal, userId: string): Promise<User> {
  return findUser(database, and(eq(users.id, userId), eq(users.partnerId, partnerOf(principal))), 'Member')
}

/** Newest first, keyset on (created_at, id) over users_partner_idx. */
export function listMembers(database: Database, principal: Principal, page: KeysetRequest) {
  return pageUsers(database, [eq(users.partnerId, partnerOf(principal))], page)
}
