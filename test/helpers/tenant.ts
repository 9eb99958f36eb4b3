// One tenant per test file: a user (and its account) plus a personal key with the scopes asked for.
import { createApi, uniqueEmail, type Api } from './api'

export interface Tenant {
  userId: string
  accountId: string
  email: string
  password: string
  key: string
  keyId: string
  api: Api
}

export const ALL_PERSONAL_SCOPES = [
  'credentials:manage',
  'accounts:read',
  'accounts:write',
  'usage:read',
  'agents:read',
  'agents:write',
  'agents:admin',
  'kb:read',
  'kb:write',
  'conversations:read',
  'conversations:write',
  'conversations:backfill',
  'summaries:read',
  'metrics:read',
  'webhooks:manage',
  'outbound:read',
  'outbound:write',
  'partners:manage',
]

export async function createTenant(
  master: Api,
  opts: { scopes?: string[]; plan?: string; keyBody?: Record<string, unknown> } = {},
): Promise<Tenant> {
  const email = uniqueEmail('tenant')
  const password = 'pw-' + Math.random().toString(36).slice(2) + '-long'
  const user = await master.post('/users', { email, password, plan: opts.plan ?? 'starter' })
  if (user.status !== 201) throw new Error(`tenant user: ${user.status} ${user.text}`)
  const key = await master.post(`/users/${user.body.user_id}/credentials`, {
    name: 'test',
    scopes: opts.scopes ?? ALL_PERSONAL_SCOPES,
    ...opts.keyBody,
  })
  if (key.status !== 201) throw new Error(`tenant key: ${key.status} ${key.text}`)
  return {
    userId: user.body.user_id,
    accountId: user.body.account_id,
    email,
    password,
    key: key.body.secret,
    keyId: key.body.key_id,
    api: createApi(master.base, key.body.secret),
  }
}
