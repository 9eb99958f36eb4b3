// The package's own tests, as its author runs them from this folder (`npm test`): the kit's contract
// suites over everything the plugin holds, registered with node:test (any framework's `it` works), then
// book_table's own behaviour.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { pluginChecks, registerChecks } from '@svc/plugin-kit/testing'
import plugin from '../index.js'

describe('contract suites', () => {
  registerChecks(pluginChecks(plugin), it)
})

describe('book_table', () => {
  const [bookTable] = plugin.capabilities
  const ctx = { accountId: 'acc_1', agentId: 'agt_1', conversationId: 'conv_1', settings: {}, notify: async () => {} }

  it('confirms a complete booking with a reference', async () => {
    const r = await bookTable.run(ctx, { party_size: 4, date: '2027-03-14', time: '19:30' })
    assert.equal(r.ok, true)
    assert.match(r.message, /ACME-20270314-1930-4/)
    assert.equal(r.record.reference, 'ACME-20270314-1930-4')
  })

  it('asks for the date, then the time, when they are missing', async () => {
    assert.match((await bookTable.run(ctx, { party_size: 2 })).message, /which date/)
    assert.match((await bookTable.run(ctx, { party_size: 2, date: '2027-03-14' })).message, /which time/)
  })
})
