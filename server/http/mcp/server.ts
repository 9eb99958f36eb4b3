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

export const SERVER_INFO = {
  name: 'conversational-agent-service',
  title: 'Conversational Agent Service',
  version: VERSION,
}

/** A tool is listed when the credential holds one of its scopes; hidden tools stay callable and answer
 *  the REST insufficient_scope as a tool error, so a model that guesses a name learns why. */
export const usableBy = (principal: Principal, tool: Tool) =>
  tool.scopes.length === 0 || tool.scopes.some((s) => principal.scopes.has(s))

export function createMcpServer(tools: Tool[], principal: Principal, caller: CallerContext): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions: SERVER_INSTRUCTIONS,
  })
  const byName = new Map(tools.map((t) => [t.spec.name, t]))
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.filter((t) => usableBy(principal, t)).map((t) => t.definition),
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name)
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
    return callTool(tool, (request.params.arguments ?? {}) as Record<string, unknown>, caller)
  })
  return server
}
