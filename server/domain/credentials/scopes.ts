// The scope catalogue: the contract's named scopes plus decisions' additions.
export const SCOPES = [
  'users:manage',
  'credentials:manage',
  'audit:read',
  'admin:all_accounts',
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
] as const
export type Scope = (typeof SCOPES)[number]

/** Never granted to personal keys. */
export const MASTER_ONLY: readonly Scope[] = ['admin:all_accounts', 'users:manage', 'audit:read']

/** The master key's implicit scopes (contract, "Credential types"). */
export const MASTER_SCOPES: readonly Scope[] = [
  'admin:all_accounts',
  'users:manage',
  'credentials:manage',
  'accounts:read',
  'audit:read',
]
