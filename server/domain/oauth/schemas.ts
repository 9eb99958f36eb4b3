import * as v from 'valibot'
import { GRANTABLE_SCOPES } from '~/domain/sessions/sessions'

// Registration bodies carry many fields we do not use (application_type, contacts, jwks, software_*):
// RFC 7591 §2 says ignore them, hence a loose object; the handler validates what it keeps.
export const RegisterBody = v.looseObject({
  redirect_uris: v.pipe(
    v.array(v.string()),
    v.description('https URIs, or http on localhost / 127.0.0.1 / [::1] (any port)'),
  ),
  token_endpoint_auth_method: v.optional(
    v.picklist(['none', 'client_secret_post', 'client_secret_basic']),
    'client_secret_basic',
  ),
  grant_types: v.optional(v.array(v.string())),
  response_types: v.optional(v.array(v.string())),
  client_name: v.optional(v.string()),
  client_uri: v.optional(v.string()),
  logo_uri: v.optional(v.string()),
  scope: v.optional(v.string()),
  software_id: v.optional(v.string()),
  software_version: v.optional(v.string()),
})

export const RegisteredClient = v.object({
  client_id: v.string(),
  client_id_issued_at: v.pipe(v.number(), v.integer(), v.description('Epoch seconds (RFC 7591)')),
  client_secret: v.optional(
    v.pipe(v.string(), v.description('Only for client_secret_post / client_secret_basic; shown once')),
  ),
  client_secret_expires_at: v.optional(v.literal(0)),
  redirect_uris: v.array(v.string()),
  token_endpoint_auth_method: v.string(),
  grant_types: v.array(v.string()),
  response_types: v.array(v.string()),
  client_name: v.optional(v.string()),
})

const ClientAuth = {
  client_id: v.optional(
    v.pipe(
      v.string(),
      v.description('Public clients and client_secret_post; confidential clients may use HTTP Basic instead'),
    ),
  ),
  client_secret: v.optional(v.string()),
}

export const TokenForm = v.object({
  grant_type: v.picklist(['authorization_code', 'refresh_token']),
  code: v.optional(v.string()),
  code_verifier: v.optional(v.string()),
  redirect_uri: v.optional(v.string()),
  refresh_token: v.optional(v.string()),
  resource: v.optional(v.string()),
  scope: v.optional(v.string()),
  ...ClientAuth,
})

export const TokenAnswer = v.object({
  access_token: v.pipe(v.string(), v.description('svc_at_…, valid 1 hour; authenticates as the connection key')),
  token_type: v.literal('Bearer'),
  expires_in: v.number(),
  refresh_token: v.pipe(v.string(), v.description('svc_rt_…, valid 90 days, rotated on every use')),
  scope: v.string(),
})

export const RevokeForm = v.object({
  token: v.string(),
  token_type_hint: v.optional(v.string()),
  ...ClientAuth,
})

export const ConnectionParams = v.object({
  id: v.pipe(v.string(), v.regex(/^ocn_\d+$/, 'invalid_id|id must look like ocn_<n>.')),
})

export const Connection = v.object({
  connection_id: v.string(),
  client_id: v.string(),
  client_name: v.nullable(v.string()),
  redirect_hosts: v.array(v.string()),
  scopes: v.array(v.picklist(GRANTABLE_SCOPES as unknown as [string, ...string[]])),
  resource: v.string(),
  key_id: v.string(),
  account_id: v.string(),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
  last_used_at: v.nullable(v.pipe(v.string(), v.isoTimestamp())),
})
