import { pipeline } from 'node:stream/promises'
import { setResponseHeader, setResponseStatus } from 'h3'
import * as v from 'valibot'
import { defineApiRoute } from '~/http/define-api-route'
import { list } from '~/http/envelope'
import { Errors } from '~/lib/errors'
import { AuditQuery, AuditRow } from '~/domain/audit/schemas'
import { auditCsvFilename, auditWindow, filtersOf, listAudit, openAuditCsv } from '~/domain/audit/audit'

export default defineApiRoute({
  summary: 'Read the audit log',
  description:
    'One row per metered request, newest first on (created_at, id), over the window [from, to) (default: the 24 hours before now). ' +
    'format=json pages with a cursor and answers meta.from and meta.to; format=csv streams up to 50000 rows as an attachment ' +
    '(columns created_at, request_id, credential_type, credential_id, account_ids, cross_account, method, path, status_code, ' +
    'error_code, ip, user_agent, duration_ms; RFC 4180 quoting; account_ids space-separated) and takes neither limit nor cursor.',
  tags: ['Audit'],
  scope: 'audit:read',
  query: AuditQuery,
  // csv writes its own response, so json builds its envelope here too.
  raw: true,
  response: v.object({ data: v.array(AuditRow) }),
  errors: ['invalid_date', 'invalid_date_range', 'invalid_id', 'invalid_limit', 'invalid_cursor'],
  async handler({ event, runtime, principal, keyset, query }) {
    const { cursor, limit, ...filters } = query
    if (query.format === 'csv') {
      if (cursor !== undefined) throw Errors.unsupportedFilter('cursor')
      if (limit !== undefined) throw Errors.unsupportedFilter('limit')
      const csv = await openAuditCsv(runtime.database, filtersOf(query, auditWindow(query)))
      setResponseStatus(event, 200)
      setResponseHeader(event, 'Content-Type', 'text/csv; charset=utf-8')
      setResponseHeader(event, 'Content-Disposition', `attachment; filename="${auditCsvFilename()}"`)
      // pipeline destroys the response if the database fails mid-file, so a client sees a broken
      // transfer rather than a short file that looks complete; a client hang-up stops the queries.
      await pipeline(csv, event.node.res).catch((e: Error) => {
        if (e.name !== 'AbortError' && (e as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
          console.error(`[audit] ${event.context.requestId} csv export failed:`, e.stack ?? e)
        }
      })
      return
    }
    const page = await keyset({
      filters,
      sort: '-created_at',
      limit: limit ?? 50,
      cursor,
    })
    return list(event, await listAudit(runtime.database, query, page))
  },
})
