// The fallback base path /api/v1 serves the same handlers as /v1. Rewriting the path in middleware
// cannot work (h3 v1 reads the path once, pitfall 6), so strip /api and re-dispatch through the router.
import { defineEventHandler } from 'h3'
import { useNitroApp } from 'nitropack/runtime'

export default defineEventHandler((event) => {
  event._path = event.path.slice('/api'.length)
  return useNitroApp().router.handler(event)
})
