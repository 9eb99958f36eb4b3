// One MCP server per request (a stateless transport cannot be reused and a server connects once). It is
// the SDK's low-level Server: our tool inputs are JSON Schemas generated from valibot, which McpServer's
// registerTool cannot take (it wants zod); the tool definitions themselves are built once (tools.ts).
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js'
import { VERSION } from '~/domain/platform/health'
import type { Principal } from '~/domain/credentials/principal'
import { SERVER_INSTRUCTIONS } from './catalogue'
import { callTool, type CallerContext } from './dispatch'
import type { Tool } from './tools'
import { listableBy } from './step-up'

export const SERVER_INFO = {
  name: 'conversational-agent-service',
  title: 'Conversational Agent Service',
  version: VERSION,
}

export function createMcpServer(tools: Tool[], principal: Principal, caller: CallerContext): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions: SERVER_INSTRUCTIONS,
  })
  const byName = new Map(tools.map((t) => [t.spec.name, t]))
  // Listed: the tools the credential holds a scope of, and for an OAuth token those a re-authorization
  // could grant (step-up.ts). A personal key's hidden tools stay callable and answer the REST
  // insufficient_scope as a tool error, so a model that guesses a name learns why. The catalogue's
  // declared order (tools.ts keeps it), so the list is the same on every call and in every process.
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.filter((t) => listableBy(principal, t)).map((t) => t.definition),
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name)
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
    return callTool(tool, (request.params.arguments ?? {}) as Record<string, unknown>, caller)
  })
  return server
}
