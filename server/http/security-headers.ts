// Headers every response carries, errors included (error.ts sets them again: Nitro's error path does not
// keep what middleware set). nosniff stops a browser from reading a JSON or text answer as HTML or script;
// HSTS is only meaningful, and only sent, when the service is reached over https.
import { setResponseHeader, type H3Event } from 'h3'
import { servedOverHttps } from './client-ip'

const HSTS = 'max-age=31536000; includeSubDomains'

export function setSecurityHeaders(event: H3Event) {
  setResponseHeader(event, 'X-Content-Type-Options', 'nosniff')
  if (servedOverHttps(event)) setResponseHeader(event, 'Strict-Transport-Security', HSTS)
}
