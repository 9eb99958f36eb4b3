// GET /capabilities and /outbound-capabilities: the registered capabilities with their arguments as JSON Schema.
import { toJsonSchema } from '@valibot/to-json-schema'
import type { Capability } from '~/kit/capability'
import type { Registry } from '~/kit/registry'

export function presentCapability(c: Capability) {
  // errorMode ignore: checks such as "e-mail or phone" have no JSON Schema form and stay server-side.
  const { $schema: _, ...parameters } = toJsonSchema(c.parameters, { errorMode: 'ignore' }) as Record<string, unknown>
  return {
    name: c.name,
    description: c.description,
    parameters,
    needs: [...c.needs],
    api_chat: c.apiChat,
    outbound: c.outbound,
  }
}

export function listCapabilities(registry: Registry<Capability>, only: 'all' | 'outbound') {
  return registry
    .list()
    .filter((c) => only === 'all' || c.outbound)
    .sort((a, b) => a.name.localeCompare(b.name))
    .map(presentCapability)
}
