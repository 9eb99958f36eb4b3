// The MCP connector on the origin root, its canonical URL (decisions "MCP and OAuth paths").
import { mcpRoute } from '~/http/mcp/handler'

export default mcpRoute('/mcp')
