// The MCP tool catalogue read as data: every tool carries a title and the four annotations, and the
// annotations agree with what the tool's REST operation does. The served order is the declared order
// (tools.ts), checked over HTTP in test/v1/mcp-current.test.ts.
import { describe, expect, it } from 'vitest'
import { TOOL_SPECS } from '~/http/mcp/catalogue'
import { verifies } from '../requirements'

const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const

describe('MCP tool catalogue', () => {
  it('gives every tool a unique name, a title and all four annotations as booleans', () => {
    verifies('mcp.tools.annotations')
    expect(TOOL_SPECS.length).toBeGreaterThan(20)
    expect(new Set(TOOL_SPECS.map((t) => t.name)).size).toBe(TOOL_SPECS.length)
    for (const t of TOOL_SPECS) {
      expect(t.title.trim().length, t.name).toBeGreaterThan(3)
      expect(t.title, t.name).not.toMatch(/_/)
      for (const h of HINTS) expect(t.annotations[h], `${t.name}.${h}`).toBeTypeOf('boolean')
      expect(Object.keys(t.annotations).sort()).toEqual([...HINTS].sort())
    }
    expect(new Set(TOOL_SPECS.map((t) => t.title)).size).toBe(TOOL_SPECS.length)
  })

  it('derives the annotations from the operation: GETs read, ends and overwrites destroy, outside reach is open-world', () => {
    verifies('mcp.tools.annotations')
    for (const t of TOOL_SPECS) {
      const a = t.annotations
      expect(a.readOnlyHint, t.name).toBe(t.method === 'GET')
      // A read changes nothing: never destructive, always safe to repeat.
      if (a.readOnlyHint) expect([a.destructiveHint, a.idempotentHint], t.name).toEqual([false, true])
      if (t.method === 'DELETE' || /^end_|^cancel_|^delete_/.test(t.name)) expect(a.destructiveHint, t.name).toBe(true)
      if (t.method === 'PATCH') expect(a.idempotentHint, t.name).toBe(true)
    }
    const by = Object.fromEntries(TOOL_SPECS.map((t) => [t.name, t.annotations]))
    const openWorld = TOOL_SPECS.filter((t) => t.annotations.openWorldHint).map((t) => t.name)
    expect(openWorld.sort()).toEqual([
      'add_knowledge_url',
      'build_agent',
      'place_call',
      'rebuild_agent',
      'send_message',
    ])
    expect(by.update_agent).toMatchObject({ destructiveHint: true, idempotentHint: true })
    expect(by.end_conversation).toMatchObject({ destructiveHint: true, idempotentHint: true })
    expect(by.add_to_do_not_call).toMatchObject({ destructiveHint: false, idempotentHint: true })
    expect(by.start_conversation).toMatchObject({ destructiveHint: false, idempotentHint: false })
  })
})
