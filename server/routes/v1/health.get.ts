import { setResponseStatus } from 'h3'
import { defineApiRoute } from '~/http/define-api-route'
import { single } from '~/http/envelope'
import { checkHealth, Health } from '~/domain/platform/health'

export default defineApiRoute({
  summary: 'Service health',
  description:
    'Checks the database live. 200 for ok or degraded; 503 with the same body (status down) when the database is unreachable or this instance is shutting down (components.api down), so a balancer stops sending to it.',
  tags: ['Platform'],
  auth: 'public',
  response: Health,
  raw: true,
  async handler({ event, runtime }) {
    const health = await checkHealth(runtime)
    if (health.status === 'down') setResponseStatus(event, 503)
    return single(event, health)
  },
})
