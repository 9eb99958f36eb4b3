// /v1/oauth/* serves the same handlers as /oauth/* (decisions "MCP and OAuth paths"): re-dispatched through
// the router like the /api/v1 alias, since rewriting the path in middleware cannot work (pitfall 6).
import { defineEventHandler } from 'h3'
import { useNitroApp } from 'nitropack/runtime'

export default defineEventHandler((event) => {
  event._path = event.path.slice('/v1'.length)
  return useNitroApp().router.handler(event)
})
