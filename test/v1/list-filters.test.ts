// Contract error table: "unsupported_filter: unknown parameter, enum value, include or sort". Every list
// route's enum-valued query parameter, given a value outside its list, answers 400 unsupported_filter
// naming the parameter (the query is validated before the route looks anything up, so ids need only be
// well formed).
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err, type Api } from '../helpers/api'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const base = inject('base')
const master = createApi(base, inject('masterKey'))
let t: Tenant

beforeAll(async () => {
  t = await createTenant(master)
})

const WINDOW = 'from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z'

/** [who asks, path with the query, the parameter that is wrong] */
const CASES: [() => Api, string, string][] = [
  [() => t.api, '/agents/agt_1/kb/documents?kind=scroll', 'kind'],
  [() => t.api, '/agents/agt_1/kb/documents?status=lost', 'status'],
  [() => t.api, `/accounts/{acc}/agents/agt_1/kb/documents?kind=scroll`, 'kind'],
  [() => t.api, `/accounts/{acc}/agents/agt_1/kb/documents?status=lost`, 'status'],
  [() => t.api, '/conversations?status=sleeping', 'status'],
  [() => t.api, '/conversations?channel=carrier_pigeon', 'channel'],
  [() => t.api, '/conversations?outcome=maybe', 'outcome'],
  [() => t.api, '/conversations?agent_type=robot', 'agent_type'],
  [() => t.api, '/conversations?sort=-name', 'sort'],
  [() => t.api, '/conversations?include=transcript', 'include'],
  [() => t.api, '/conversations?include=everything', 'include'],
  [() => t.api, '/conversations/conv_p1?transcript_format=xml', 'transcript_format'],
  [() => t.api, '/conversations/conv_p1?include=nothing', 'include'],
  [() => t.api, '/webhooks/deliveries?status=lost', 'status'],
  [() => t.api, '/webhooks/deliveries?event=conversation.sneezed', 'event'],
  [() => t.api, '/agents/agt_1/prompts?type=fax', 'type'],
  [() => t.api, `/metrics?channel=fax&${WINDOW}`, 'channel'],
  [() => t.api, `/metrics/conversations?channel=fax&${WINDOW}`, 'channel'],
  [() => t.api, `/metrics/conversations?group_by=hour&${WINDOW}`, 'group_by'],
  [() => t.api, `/accounts/{acc}/usage?group_by=planet&${WINDOW}`, 'group_by'],
  [() => t.api, '/accounts?status=sleeping', 'status'],
  [() => master, '/users?status=sleeping', 'status'],
  [() => master, '/audit?format=xml', 'format'],
]

describe('unknown enum values in list queries', () => {
  it.each(CASES.map(([who, path, field]) => ({ who, path, field })))(
    'GET $path is 400 unsupported_filter (field $field)',
    async ({ who, path, field }) => {
      verifies('filters.unknown-enum')
      const r = await who().get(path.replace('{acc}', t.accountId))
      expect(r.status).toBe(400)
      expect(err(r)).toMatchObject({ code: 'unsupported_filter', field })
    },
  )

  it('a query boolean that is not true or false stays validation_error (contract)', async () => {
    verifies('filters.unknown-enum')
    for (const name of ['escalated', 'has_identity', 'has_recording']) {
      expect(err(await t.api.get(`/conversations?${name}=maybe`)), name).toMatchObject({
        code: 'validation_error',
        field: name,
      })
    }
  })
})
