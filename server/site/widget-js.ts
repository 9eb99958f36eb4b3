// GET /widget.js: the embeddable widget script (widget/src, built by scripts/build-widget.mjs into the
// #svc/widget-script virtual module at `nitropack build`). Not an API route: registered by nitro.config.ts
// `handlers`, outside server/routes, so it is neither in the OpenAPI document nor behind a key.
// Caching (docs/decisions "Widget script and demo page"): the unversioned URL the snippet loads is
// `public, max-age=300` (an upgrade reaches every site within five minutes); `/widget.js?v=<version>` of
// the current version is `public, max-age=31536000, immutable`; any other v is answered like the
// unversioned URL (never an old script cached for a year). ETag is the version; If-None-Match gives 304.
import { gzipSync } from 'node:zlib'
import { defineEventHandler, getHeader, getQuery, setResponseHeader, setResponseStatus } from 'h3'
import widget from '#svc/widget-script'

export const WIDGET_VERSION = widget.hash
export const SHORT_CACHE = 'public, max-age=300'
export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable'

let gzipped: Buffer | undefined

export default defineEventHandler((event) => {
  const etag = `"${widget.hash}"`
  const versioned = getQuery(event).v === widget.hash
  setResponseHeader(event, 'Content-Type', 'application/javascript; charset=utf-8')
  setResponseHeader(event, 'Cache-Control', versioned ? IMMUTABLE_CACHE : SHORT_CACHE)
  setResponseHeader(event, 'ETag', etag)
  setResponseHeader(event, 'Vary', 'Accept-Encoding')
  // Loaded by <script> from any site: allow the cross-origin read explicitly.
  setResponseHeader(event, 'Cross-Origin-Resource-Policy', 'cross-origin')
  const inm = getHeader(event, 'if-none-match')
  if (inm && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)) {
    setResponseStatus(event, 304)
    return ''
  }
  if (/\bgzip\b/.test(getHeader(event, 'accept-encoding') ?? '')) {
    gzipped ??= gzipSync(widget.code, { level: 9 })
    setResponseHeader(event, 'Content-Encoding', 'gzip')
    return gzipped
  }
  return widget.code
})
