// Catalogues over HTTP: GET /voices, /capabilities and /outbound-capabilities, served from the registries.
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { createApi, err } from '../helpers/api'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'

const base = inject('base')
const master = createApi(base, inject('masterKey'))
let t: Tenant

beforeAll(async () => {
  t = await createTenant(master)
})

describe('GET /voices', () => {
  it("lists every provider's voices in one page without a cursor", async () => {
    verifies('catalogue.voices', 'envelope.list')
    const r = await t.api.get('/voices')
    expect(r.status).toBe(200)
    expect(r.body.pagination).toEqual({ limit: r.body.data.length, has_more: false, next_cursor: null })
    expect(new Set(r.body.data.map((v: any) => v.provider))).toEqual(new Set(['neural', 'realtime']))
    for (const v of r.body.data)
      expect(Object.keys(v).sort()).toEqual([
        'gender',
        'locale',
        'model',
        'name',
        'preview_url',
        'provider',
        'voice_id',
      ])
    expect(r.body.data.find((v: any) => v.voice_id === 'realtime-alloy')).toMatchObject({
      name: 'Alloy',
      locale: 'en-US',
      preview_url: null,
      provider: 'realtime',
      model: 'gpt-4o-realtime-preview',
    })
  })

  it('filters by provider and by locale (a language matches its regions)', async () => {
    verifies('catalogue.voices')
    const neural = await t.api.get('/voices?provider=neural')
    expect(neural.body.data.length).toBeGreaterThan(0)
    expect(neural.body.data.every((v: any) => v.provider === 'neural')).toBe(true)
    const fr = await t.api.get('/voices?locale=fr-FR')
    expect(fr.body.data.length).toBeGreaterThan(0)
    expect(fr.body.data.every((v: any) => v.locale === 'fr-FR')).toBe(true)
    const en = await t.api.get('/voices?locale=en&provider=neural')
    expect(new Set(en.body.data.map((v: any) => v.locale))).toEqual(new Set(['en-US', 'en-GB']))
    expect((await t.api.get('/voices?locale=sw-KE')).body.data).toEqual([])
  })

  it('refuses unknown filters, bad locales and unknown providers', async () => {
    verifies('errors.unsupported_filter', 'errors.validation_error')
    const r = await t.api.get('/voices?gender=female')
    expect(r.status).toBe(400)
    expect(err(r)).toMatchObject({ code: 'unsupported_filter', field: 'gender' })
    expect(err(await t.api.get('/voices?locale=not a locale'))).toMatchObject({
      code: 'validation_error',
      field: 'locale',
    })
    expect(err(await t.api.get('/voices?provider=nope'))).toMatchObject({ code: 'validation_error', field: 'provider' })
  })
})

describe('GET /capabilities and /outbound-capabilities', () => {
  it('list each capability with JSON Schema parameters, needs and api_chat', async () => {
    verifies('catalogue.capabilities')
    const r = await t.api.get('/capabilities')
    expect(r.status).toBe(200)
    const byName = Object.fromEntries(r.body.data.map((c: any) => [c.name, c]))
    expect(Object.keys(byName)).toEqual(
      expect.arrayContaining(['capture_lead', 'create_ticket', 'place_order', 'transfer_call', 'send_link']),
    )
    expect(r.body.pagination.has_more).toBe(false)
    for (const c of r.body.data) {
      expect(Object.keys(c).sort()).toEqual(['api_chat', 'description', 'name', 'needs', 'outbound', 'parameters'])
      expect(c.parameters.type).toBe('object')
      expect(c.parameters.$schema).toBeUndefined()
    }
    expect(byName.capture_lead).toMatchObject({ needs: ['lead_emails'], api_chat: true })
    expect(byName.capture_lead.parameters.properties.email).toMatchObject({ type: 'string', format: 'email' })
    expect(byName.capture_lead.parameters.additionalProperties).toBe(false)
    expect(byName.transfer_call).toMatchObject({ needs: ['transfer_directory'], api_chat: false })
    expect(byName.send_link.needs).toEqual(['website_url'])
    expect(byName.create_ticket.parameters.required).toEqual(['subject', 'description'])
  })

  it('/outbound-capabilities lists only those an outbound call may use', async () => {
    verifies('catalogue.capabilities')
    const all = (await t.api.get('/capabilities')).body.data
    const r = await t.api.get('/outbound-capabilities')
    expect(r.status).toBe(200)
    expect(r.body.data).toEqual(all.filter((c: any) => c.outbound))
    expect(r.body.data.map((c: any) => c.name)).toContain('transfer_call')
    expect(r.body.data.map((c: any) => c.name)).not.toContain('send_link')
    expect(err(await t.api.get('/capabilities?limit=5')).code).toBe('unsupported_filter')
  })

  it('need agents:read: another key is 403 insufficient_scope', async () => {
    verifies('auth.scope')
    const k = await master.post(`/users/${t.userId}/credentials`, { scopes: ['accounts:read'] })
    const narrow = createApi(base, k.body.secret)
    for (const path of ['/voices', '/capabilities', '/outbound-capabilities']) {
      const r = await narrow.get(path)
      expect(r.status).toBe(403)
      expect(err(r).code).toBe('insufficient_scope')
    }
  })
})
