import { defineApiRoute } from '~/http/define-api-route'
import { importContacts, listAccount } from '~/domain/contact-lists/lists'
import { ImportJson, ImportMultipart, ImportResult, ListParams } from '~/domain/contact-lists/schemas'
import { Errors, apiError } from '~/lib/errors'

export default defineApiRoute({
  summary: 'Import contacts into a list',
  description:
    'multipart/form-data with a part `file`: CSV (UTF-8, optional BOM, RFC 4180 quoting; at most 10 MB, else 413 ' +
    'payload_too_large, and 50,000 rows, parsed in bounded chunks) whose header row names `phone` (required), `name`, `timezone` and any other ' +
    'column, which becomes a variable; or JSON {contacts: [{phone, name?, timezone?, variables?}]}. Numbers are ' +
    "international, or national in the list's default_region; timezone is an IANA zone. Numbers are deduplicated " +
    'within the import and against the list (counted in duplicates); numbers on the do-not-call list are kept and read ' +
    'dnc: true. Invalid rows are reported as {line, reason} (line: the CSV line, header = 1; for JSON the 1-based ' +
    'position) and the valid rows are imported, all in one transaction. Answers 200 {imported, duplicates, invalid, list}. ' +
    'A file without a phone header is 400 validation_error (field file). More than 50,000 rows (CSV rows or JSON ' +
    'contacts) in one import, or a list that holds or would hold more than 200,000 items, is 403 plan_limit_reached ' +
    'and nothing is imported.',
  tags: ['Outbound'],
  scope: 'outbound:write',
  dataRoute: true,
  params: ListParams,
  body: ImportJson,
  multipart: true,
  multipartBody: ImportMultipart,
  response: ImportResult,
  errors: [
    'invalid_id',
    'not_found',
    'unsupported_field',
    'validation_error',
    'payload_too_large',
    'plan_limit_reached',
  ],
  handler: ({ runtime, account, params, body, parts }) => {
    const accountId = listAccount(account)
    if (!parts) return importContacts(runtime, accountId, params.lst, { kind: 'json', contacts: body?.contacts ?? [] })
    const unknown = parts.find((p) => p.name !== 'file')
    if (unknown) throw apiError('unsupported_field', `Unknown form part ${unknown.name ?? ''}.`, unknown.name ?? null)
    const files = parts.filter((p) => p.name === 'file')
    if (files.length !== 1) throw Errors.validation('file', 'Send the CSV as exactly one form part named file.')
    return importContacts(runtime, accountId, params.lst, { kind: 'csv', data: files[0].data })
  },
})
