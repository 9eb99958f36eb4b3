// The factory of the operator surface (/v1/admin/*, issue 18): the master key only (decisions "Run
// surfaces", row Operator surface: any other credential is 403 forbidden), tagged Operator in OpenAPI, never an
// MCP tool. A route that declares `action` is a write: after its handler succeeds, the action is recorded in
// the action log (GET /admin/actions) with the request id, the path ids as target and the body as params.
import type * as v from 'valibot'
import { recordAction } from '~/domain/admin/actions'
import type { ObjSchema, ApiRouteOptions } from './route-meta'
import { defineApiRoute } from './define-api-route'
import { requestIdOf } from './envelope'

type AdminRouteOptions<PS, QS, BS, R> = Omit<
  ApiRouteOptions<PS, QS, BS, R>,
  'scope' | 'anyScope' | 'tags' | 'auth' | 'dataRoute' | 'masterOnly'
> & {
  /** The action's name in the log (customer.wallet.credit, agent.pause…); only on writes. A function names it
   *  from the parsed body (POST /admin/agents/{agt}/actions: agent.<action>). */
  action?: string | ((body: BS extends v.GenericSchema ? v.InferOutput<BS> : undefined) => string)
}

/** Body keys never copied into the action log. */
const SECRET_KEYS = new Set(['password', 'secret', 'token'])

export function defineAdminRoute<
  PS extends ObjSchema | undefined = undefined,
  QS extends ObjSchema | undefined = undefined,
  BS extends v.GenericSchema | undefined = undefined,
  R = unknown,
>(opts: AdminRouteOptions<PS, QS, BS, R>) {
  const { action, handler, ...rest } = opts
  return defineApiRoute<PS, QS, BS, R>({
    ...rest,
    tags: ['Operator'],
    masterOnly: true,
    errors: ['forbidden', ...(rest.errors ?? [])],
    async handler(ctx) {
      const result = await handler(ctx)
      if (action) {
        const ids = Object.values((ctx.params ?? {}) as Record<string, unknown>).filter((x) => typeof x === 'string')
        const body = ctx.body && typeof ctx.body === 'object' ? (ctx.body as Record<string, unknown>) : {}
        const params = Object.fromEntries(Object.entries(body).filter(([k]) => !SECRET_KEYS.has(k)))
        await recordAction(ctx.runtime.database.db, {
          action: typeof action === 'function' ? action(ctx.body as never) : action,
          target: (ids as string[]).join('/') || null,
          params,
          requestId: requestIdOf(ctx.event),
        })
      }
      return result
    },
  })
}
