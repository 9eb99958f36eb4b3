// The named response schemas, for the OpenAPI document's components: every valibot schema the domain
// schema modules export, by its export name. The builder turns the ones several operations return into
// shared components ($ref under components.schemas); the rest stay inline.
import type * as v from 'valibot'
import * as accounts_schemas from '~/domain/accounts/schemas'
import * as admin_schemas from '~/domain/admin/schemas'
import * as agent_tests_schemas from '~/domain/agent-tests/schemas'
import * as agents_schemas from '~/domain/agents/schemas'
import * as analysis_schemas from '~/domain/analysis/schemas'
import * as audit_schemas from '~/domain/audit/schemas'
import * as builds_schemas from '~/domain/builds/schemas'
import * as calls_outbound_schemas from '~/domain/calls/outbound-schemas'
import * as calls_schemas from '~/domain/calls/schemas'
import * as campaigns_schemas from '~/domain/campaigns/schemas'
import * as catalogue_schemas from '~/domain/catalogue/schemas'
import * as contact_lists_schemas from '~/domain/contact-lists/schemas'
import * as conversations_chat_schemas from '~/domain/conversations/chat-schemas'
import * as conversations_schemas from '~/domain/conversations/schemas'
import * as credentials_schemas from '~/domain/credentials/schemas'
import * as dnc_schemas from '~/domain/dnc/schemas'
import * as kb_document_schemas from '~/domain/kb/document-schemas'
import * as kb_schemas_summary from '~/domain/kb/schemas-summary'
import * as kb_sync_schemas from '~/domain/kb/sync-schemas'
import * as metrics_schemas from '~/domain/metrics/schemas'
import * as oauth_schemas from '~/domain/oauth/schemas'
import * as partners_schemas from '~/domain/partners/schemas'
import * as phone_numbers_schemas from '~/domain/phone-numbers/schemas'
import * as profiles_schemas from '~/domain/profiles/schemas'
import * as sessions_schemas from '~/domain/sessions/schemas'
import * as users_schemas from '~/domain/users/schemas'
import * as webhooks_schemas from '~/domain/webhooks/schemas'
import * as widget_schemas from '~/domain/widget/schemas'

const MODULES: Record<string, unknown>[] = [
  accounts_schemas,
  admin_schemas,
  agent_tests_schemas,
  agents_schemas,
  analysis_schemas,
  audit_schemas,
  builds_schemas,
  calls_outbound_schemas,
  calls_schemas,
  campaigns_schemas,
  catalogue_schemas,
  contact_lists_schemas,
  conversations_chat_schemas,
  conversations_schemas,
  credentials_schemas,
  dnc_schemas,
  kb_document_schemas,
  kb_schemas_summary,
  kb_sync_schemas,
  metrics_schemas,
  oauth_schemas,
  partners_schemas,
  phone_numbers_schemas,
  profiles_schemas,
  sessions_schemas,
  users_schemas,
  webhooks_schemas,
  widget_schemas,
]

const isSchema = (x: unknown): x is v.GenericSchema =>
  !!x && typeof x === 'object' && (x as { kind?: unknown }).kind === 'schema'

/** Each exported schema and its export name (the first module to export a name keeps it). */
export const SCHEMA_NAMES: Map<v.GenericSchema, string> = (() => {
  const out = new Map<v.GenericSchema, string>()
  const taken = new Set<string>()
  for (const mod of MODULES)
    for (const [name, value] of Object.entries(mod)) {
      if (!isSchema(value) || out.has(value) || taken.has(name) || !/^[A-Z]/.test(name)) continue
      out.set(value, name)
      taken.add(name)
    }
  return out
})()
