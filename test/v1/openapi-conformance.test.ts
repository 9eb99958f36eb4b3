// The OpenAPI document describes whole answers and typed parameters (issue 37), and the test helpers hold
// every response of the suite to it (test/helpers/openapi-conformance.ts).
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { countGaps } from '../../scripts/openapi-counts.mjs'
import { createApi } from '../helpers/api'
import { checkConformance, ConformanceError } from '../helpers/openapi-conformance'
import { verifies } from '../requirements'

describe('OpenAPI responses, parameters and conformance', () => {
  const base = inject('base')
  let doc: any
  const op = (path: string, method: string) => doc.paths[path][method]
  const okSchema = (path: string, method: string, status = '200') =>
    op(path, method).responses[status].content['application/json'].schema
  const param = (path: string, method: string, name: string) =>
    op(path, method).parameters.find((p: any) => p.name === name && p.in === 'query')

  beforeAll(async () => {
    doc = await (await fetch(`${base}/openapi.json`)).json()
  })

  it('has no list without pagination, no empty property schema, no *_at without date-time, no string-typed count', () => {
    verifies('openapi.responses', 'openapi.parameters')
    expect(countGaps(doc)).toEqual({
      lists_without_pagination: 0,
      empty_schema_properties: 0,
      at_without_date_time: 0,
      string_typed_query_params: 0,
    })
  })

  it('describes the list envelope, meta on single objects, shared components, enums and id patterns', () => {
    verifies('openapi.responses', 'envelope.list', 'envelope.single')
    const list = okSchema('/credentials', 'get')
    expect(list.required).toEqual(expect.arrayContaining(['data', 'pagination', 'meta']))
    expect(list.properties.pagination).toEqual({ $ref: '#/components/schemas/Pagination' })
    expect(list.properties.data.items).toEqual({ $ref: '#/components/schemas/ApiKey' })
    const user = okSchema('/users/{usr}', 'get')
    expect(user.allOf[0]).toEqual({ $ref: '#/components/schemas/User' })
    expect(user.allOf[1].required).toEqual(['meta'])
    const agent = doc.components.schemas.Agent
    expect(agent.properties.agent_id.pattern).toBe('^agt_\\d+$')
    expect(agent.properties.temperature.type).toBe('number')
    expect(agent.properties.created_at.format).toBe('date-time')
    expect(agent.required).toEqual(expect.arrayContaining(['instructions', 'voice', 'widget', 'kb_sync']))
    expect(agent.properties.instructions.anyOf).toContainEqual({ type: 'null' })
    expect(doc.components.schemas.Delivery.properties.event_type.enum).toContain('conversation.started')
    expect(doc.components.schemas.Pagination.properties.next_cursor.type).toEqual(['string', 'null'])
  })

  it('types query parameters as what they mean', () => {
    verifies('openapi.parameters')
    expect(param('/conversations', 'get', 'limit').schema).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 500,
      default: 50,
    })
    expect(param('/conversations', 'get', 'escalated').schema).toEqual({ type: 'boolean' })
    expect(param('/conversations', 'get', 'from').schema).toMatchObject({ type: 'string', format: 'date-time' })
    const channel = param('/conversations', 'get', 'channel')
    expect(channel).toMatchObject({ style: 'form', explode: true })
    expect(channel.schema.type).toBe('array')
    expect(channel.schema.items.enum).toContain('phone_inbound')
    expect(param('/conversations', 'get', 'account_id').schema.items.type).toBe('string')
    expect(param('/audit', 'get', 'status_code').schema.type).toBe('integer')
  })

  it('fails a response whose body or 2xx status the document does not describe, and passes the real ones', async () => {
    verifies('openapi.conformance')
    const health = await createApi(base).get('/health')
    expect(health.status).toBe(200)
    const json = 'application/json'
    const check = (status: number, body: unknown) =>
      checkConformance({ method: 'GET', url: `${base}/health`, status, contentType: json, body })
    await expect(check(200, health.body)).resolves.toBeUndefined()
    const { meta: _, ...withoutMeta } = health.body
    await expect(check(200, withoutMeta)).rejects.toThrow(ConformanceError)
    await expect(check(200, { ...health.body, status: 42 })).rejects.toThrow(/status/)
    await expect(check(201, health.body)).rejects.toThrow(/not documented/)
    // An error the operation does not list is still held to the error envelope.
    await expect(check(418, { error: { code: 'x' } })).rejects.toThrow(ConformanceError)
  })
})
