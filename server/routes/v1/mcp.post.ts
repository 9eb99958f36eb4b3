// The MCP connector under the base URL: the same handler as /mcp, with its own resource metadata URL.
import { mcpRoute } from '~/http/mcp/handler'

export default mcpRoute('/v1/mcp')
