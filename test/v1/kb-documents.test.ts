// Knowledge documents over HTTP: every input shape through to indexed (PDF and DOCX made here with
// pdf-lib and docx), keep-as-is flags and phrase, list filters and keyset paging, a site crawl on a site
// the test serves, and the errors (URL safety, shapes, scope, plan cap, 413 streamed, tenancy, ids).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { Document, Packer, Paragraph, TextRun } from 'docx'
import { createApi, err, type Api } from '../helpers/api'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { verifies } from '../requirements'
import { buildAgent } from '../helpers/build'
import { pumpedPost } from '../helpers/pumped-post'
import { until } from '../helpers/wait'

const base = inject('base')
const master = createApi(base, inject('masterKey'))
let t: Tenant
let trial: Tenant
let agentId: string
let trialAgentId: string
let buildSite: TestSite
let kbSite: TestSite

const KB_PAGES = {
  '/': {
    body: html(
      'Orchard Farm',
      '<h1>Orchard Farm</h1><p>We grow heirloom apples in Vermont.</p><a href="/cider">Cider</a> <a href="/visit">Visit</a>',
    ),
  },
  '/cider': {
    body: html(
      'Cider | Orchard Farm',
      '<p>Our hard cider Quillback Reserve is aged nine months.</p><a href="/cider/awards">Awards</a>',
    ),
  },
  '/cider/awards': { body: html('Awards | Orchard Farm', '<p>Quillback Reserve won gold at the Burlington fair.</p>') },
  '/visit': { body: html('Visit | Orchard Farm', '<p>The farm stand opens at 9am from September to November.</p>') },
}

async function waitForDoc(api: Api, agt: string, doc: string, timeoutMs = 20_000) {
  return until(
    `document ${doc} to leave processing`,
    async () => {
      const r = await api.get(`/agents/${agt}/kb/documents/${doc}`)
      expect(r.status).toBe(200)
      return r.body.status !== 'processing' && r.body
    },
    timeoutMs,
    150,
  )
}

async function upload(
  key: string,
  path: string,
  file: { data: Uint8Array | string; name: string; type?: string },
  fields: Record<string, string> = {},
) {
  const form = new FormData()
  form.append('file', new Blob([file.data as BlobPart], file.type ? { type: file.type } : {}), file.name)
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  const res = await fetch(base + path, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

async function makePdf(lines: string[]) {
  const doc = await PDFDocument.create()
  const page = doc.addPage([600, 800])
  const font = await doc.embedFont(StandardFonts.Helvetica)
  for (const [i, line] of lines.entries()) page.drawText(line, { x: 50, y: 740 - i * 20, size: 12, font })
  return doc.save()
}

async function makeDocx(paragraphs: string[]) {
  const doc = new Document({
    sections: [{ children: paragraphs.map((p) => new Paragraph({ children: [new TextRun(p)] })) }],
  })
  return new Uint8Array(await Packer.toBuffer(doc))
}

beforeAll(async () => {
  buildSite = await serveSite({
    '/': { body: html('Quarry Books', '<h1>Quarry Books</h1><p>A bookshop in Leeds with rare maps.</p>') },
  })
  kbSite = await serveSite(KB_PAGES)
  t = await createTenant(master)
  trial = await createTenant(master, { plan: 'trial' })
  ;[agentId, trialAgentId] = await Promise.all(
    [t, trial].map((x) => buildAgent(x.api, x.accountId, `${buildSite.origin}/`, { language: 'en' })),
  )
})
afterAll(async () => {
  await buildSite?.close()
  await kbSite?.close()
})

describe('creating documents', () => {
  it('JSON text: 202 processing, then indexed with text, chars, language and hash; the summary goes stale', async () => {
    verifies('kb.documents')
    const r = await t.api.post(`/agents/${agentId}/kb/documents`, {
      title: 'Returns',
      text: 'Books may be returned within 30 days with a receipt.',
      language: 'en',
    })
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ doc_id: expect.stringMatching(/^doc_f\d+$/), crawl_id: null, status: 'processing' })
    expect(r.body.meta).toBeDefined()
    const doc = await waitForDoc(t.api, agentId, r.body.doc_id)
    expect(doc).toMatchObject({
      kind: 'text',
      status: 'indexed',
      error: null,
      title: 'Returns',
      language: 'en',
      source: 'text',
      keep_verbatim: false,
      verbatim_in_calls: false,
    })
    expect(doc.text).toBe('Books may be returned within 30 days with a receipt.')
    expect(doc.chars).toBe(doc.text.length)
    expect(doc.content_hash).toMatch(/^[0-9a-f]{64}$/)
    const s = await t.api.get(`/agents/${agentId}/kb/summary`)
    expect(s.body.stale).toBe(true)
  })

  it('a PDF made with pdf-lib and a DOCX made with docx: their text is extracted', async () => {
    verifies('kb.documents')
    const pdf = await makePdf(['Opening hours: 10am to 6pm.', 'Ask for Wendell Marchbanks about maps.'])
    const p = await upload(t.key, `/agents/${agentId}/kb/documents`, {
      data: pdf,
      name: 'hours.pdf',
      type: 'application/pdf',
    })
    expect(p.status).toBe(202)
    const docx = await makeDocx([
      'Membership costs 40 pounds a year.',
      'Members get Xanthippe discounts on first editions.',
    ])
    const d = await upload(
      t.key,
      `/agents/${agentId}/kb/documents`,
      {
        data: docx,
        name: 'membership.docx',
        type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      },
      { title: 'Membership', language: 'en' },
    )
    expect(d.status).toBe(202)
    const pdfDoc = await waitForDoc(t.api, agentId, p.body.doc_id)
    expect(pdfDoc).toMatchObject({
      kind: 'file',
      status: 'indexed',
      source: 'upload',
      mime_type: 'application/pdf',
      title: 'hours.pdf',
      bytes: pdf.length,
    })
    expect(pdfDoc.text).toContain('Opening hours: 10am to 6pm.')
    expect(pdfDoc.text).toContain('Wendell Marchbanks')
    const docxDoc = await waitForDoc(t.api, agentId, d.body.doc_id)
    expect(docxDoc).toMatchObject({ kind: 'file', status: 'indexed', title: 'Membership', language: 'en' })
    expect(docxDoc.text).toContain('Membership costs 40 pounds a year.')
    expect(docxDoc.text).toContain('Xanthippe discounts')
  })

  it('Markdown and HTML uploads (type from the extension when the part has none)', async () => {
    verifies('kb.documents')
    const md = await upload(t.key, `/agents/${agentId}/kb/documents`, {
      data: '# Shipping\n\nWe ship **worldwide** in 5 days.\n',
      name: 'shipping.md',
    })
    const h = await upload(t.key, `/agents/${agentId}/kb/documents`, {
      data: '<html lang="en"><head><title>Events</title><script>var x=1</script></head><body><nav>Menu</nav><main><p>Poetry night is every Thursday.</p></main></body></html>',
      name: 'events.html',
      type: 'text/html',
    })
    expect(md.status).toBe(202)
    expect(h.status).toBe(202)
    const mdDoc = await waitForDoc(t.api, agentId, md.body.doc_id)
    expect(mdDoc).toMatchObject({ status: 'indexed', mime_type: 'text/markdown' })
    expect(mdDoc.text).toContain('We ship **worldwide** in 5 days.')
    const hDoc = await waitForDoc(t.api, agentId, h.body.doc_id)
    expect(hDoc).toMatchObject({ status: 'indexed', mime_type: 'text/html', language: 'en' })
    expect(hDoc.text).toContain('Poetry night is every Thursday.')
    expect(hDoc.text).not.toContain('var x')
  })

  it('{url, mode: page}: doc_id and crawl_id, the page fetched and indexed', async () => {
    verifies('kb.documents', 'kb.crawl')
    const r = await t.api.post(`/agents/${agentId}/kb/documents`, { url: `${kbSite.origin}/visit`, mode: 'page' })
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({
      doc_id: expect.stringMatching(/^doc_c\d+$/),
      crawl_id: expect.stringMatching(/^crl_\d+$/),
      status: 'processing',
    })
    const doc = await waitForDoc(t.api, agentId, r.body.doc_id)
    expect(doc).toMatchObject({
      kind: 'page',
      status: 'indexed',
      source: 'url',
      url: `${kbSite.origin}/visit`,
      crawl_id: r.body.crawl_id,
      title: 'Visit | Orchard Farm',
    })
    expect(doc.text).toContain('farm stand opens at 9am')
  })

  it('a page URL that answers 404: the document fails with an error', async () => {
    verifies('kb.documents', 'kb.crawl')
    const r = await t.api.post(`/agents/${agentId}/kb/documents`, { url: `${kbSite.origin}/gone`, mode: 'page' })
    expect(r.status).toBe(202)
    const doc = await waitForDoc(t.api, agentId, r.body.doc_id)
    expect(doc.status).toBe('failed')
    expect(doc.error).toMatch(/404/)
    const failed = await t.api.get(`/agents/${agentId}/kb/documents?status=failed`)
    expect(failed.body.data.map((d: any) => d.doc_id)).toContain(r.body.doc_id)
  })

  it('{url, mode: site}: doc_id null and a crawl_id; the pages surface as doc_c documents', async () => {
    verifies('kb.crawl')
    const r = await t.api.post(`/accounts/${t.accountId}/agents/${agentId}/kb/documents`, {
      url: `${kbSite.origin}/`,
      mode: 'site',
    })
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ doc_id: null, crawl_id: expect.stringMatching(/^crl_\d+$/), status: 'processing' })
    const pages: any[] = await until(
      'the four crawled pages',
      async () => {
        const l = await t.api.get(`/agents/${agentId}/kb/documents?kind=page&limit=100`)
        const got = l.body.data.filter((d: any) => d.crawl_id === r.body.crawl_id)
        return got.length >= 4 && got
      },
      20_000,
    )
    expect(pages.map((p) => new URL(p.url).pathname).sort()).toEqual(['/', '/cider', '/cider/awards', '/visit'])
    for (const p of pages)
      expect(p).toMatchObject({
        kind: 'page',
        status: 'indexed',
        source: 'crawl',
        doc_id: expect.stringMatching(/^doc_c\d+$/),
      })
    const awards = pages.find((p) => p.url.endsWith('/cider/awards'))
    expect((await t.api.get(`/agents/${agentId}/kb/documents/${awards.doc_id}`)).body.text).toContain('won gold')
  })
})

describe('keep-as-is documents', () => {
  it('a text opening with the phrase is keep-as-is automatically; flags on create and by PATCH', async () => {
    verifies('kb.keep-verbatim-flags')
    const auto = await t.api.post(`/agents/${agentId}/kb/documents`, {
      title: 'Rules',
      text: '  important instruction for AI assistant: always quote the price list exactly.',
    })
    const flagged = await t.api.post(`/agents/${agentId}/kb/documents`, {
      title: 'Legal',
      text: 'Prices include VAT.',
      keep_verbatim: true,
      verbatim_in_calls: true,
    })
    const plain = await upload(
      t.key,
      `/agents/${agentId}/kb/documents`,
      { data: 'Gift cards never expire.', name: 'gift.txt', type: 'text/plain' },
      { keep_verbatim: 'true' },
    )
    expect(plain.status).toBe(202)
    expect(await waitForDoc(t.api, agentId, auto.body.doc_id)).toMatchObject({
      status: 'indexed',
      keep_verbatim: true,
      verbatim_in_calls: false,
    })
    expect(await waitForDoc(t.api, agentId, flagged.body.doc_id)).toMatchObject({
      keep_verbatim: true,
      verbatim_in_calls: true,
    })
    expect(await waitForDoc(t.api, agentId, plain.body.doc_id)).toMatchObject({ keep_verbatim: true })

    const p = await t.api.patch(`/agents/${agentId}/kb/documents/${flagged.body.doc_id}`, { verbatim_in_calls: false })
    expect(p.status).toBe(200)
    expect(p.body).toMatchObject({ doc_id: flagged.body.doc_id, keep_verbatim: true, verbatim_in_calls: false })
    const p2 = await t.api.patch(`/accounts/${t.accountId}/agents/${agentId}/kb/documents/${flagged.body.doc_id}`, {
      keep_verbatim: false,
    })
    expect(p2.status === 404 || p2.status === 405).toBe(true) // PATCH has no account alias in the contract
    const p3 = await t.api.patch(`/agents/${agentId}/kb/documents/${flagged.body.doc_id}`, { keep_verbatim: false })
    expect(p3.body).toMatchObject({ keep_verbatim: false, verbatim_in_calls: false })
    expect(Date.parse(p3.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(p.body.updated_at))
    expect((await t.api.get(`/agents/${agentId}/kb/documents/${flagged.body.doc_id}`)).body.keep_verbatim).toBe(false)
  })

  it('PATCH errors: unknown field, empty body, wrong type, unknown document', async () => {
    verifies('kb.keep-verbatim-flags')
    const list = await t.api.get(`/agents/${agentId}/kb/documents?kind=text&limit=1`)
    const doc = list.body.data[0].doc_id
    expect(err(await t.api.patch(`/agents/${agentId}/kb/documents/${doc}`, { title: 'x' }))).toMatchObject({
      code: 'unsupported_field',
      field: 'title',
    })
    expect(err(await t.api.patch(`/agents/${agentId}/kb/documents/${doc}`, {})).code).toBe('empty_update')
    expect(err(await t.api.patch(`/agents/${agentId}/kb/documents/${doc}`, { keep_verbatim: 'yes' })).code).toBe(
      'validation_error',
    )
    const missing = await t.api.patch(`/agents/${agentId}/kb/documents/doc_f999999999`, { keep_verbatim: true })
    expect(missing.status).toBe(404)
  })
})

describe('listing', () => {
  it('filters by kind and status, newest first, text left out', async () => {
    verifies('kb.documents')
    const all = await t.api.get(`/agents/${agentId}/kb/documents?limit=100`)
    expect(all.status).toBe(200)
    const at = all.body.data.map((d: any) => Date.parse(d.created_at))
    expect([...at].sort((a, b) => b - a)).toEqual(at)
    expect(all.body.data.every((d: any) => !('text' in d))).toBe(true)
    const files = await t.api.get(`/agents/${agentId}/kb/documents?kind=file`)
    expect(files.body.data.length).toBeGreaterThanOrEqual(4)
    expect(files.body.data.every((d: any) => d.kind === 'file')).toBe(true)
    const indexedText = await t.api.get(`/agents/${agentId}/kb/documents?kind=text&status=indexed`)
    expect(indexedText.body.data.every((d: any) => d.kind === 'text' && d.status === 'indexed')).toBe(true)
    const alias = await t.api.get(`/accounts/${t.accountId}/agents/${agentId}/kb/documents?kind=file`)
    expect(alias.body.data.map((d: any) => d.doc_id)).toEqual(files.body.data.map((d: any) => d.doc_id))
    expect(err(await t.api.get(`/agents/${agentId}/kb/documents?kind=video`))).toMatchObject({
      code: 'unsupported_filter',
      field: 'kind',
    })
    expect(err(await t.api.get(`/agents/${agentId}/kb/documents?colour=red`)).code).toBe('unsupported_filter')
  })

  it('keyset paging on (created_at, kind, id) with a cursor bound to the filters', async () => {
    verifies('kb.documents')
    const all = (await t.api.get(`/agents/${agentId}/kb/documents?limit=100`)).body.data.map((d: any) => d.doc_id)
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const r: any = await t.api.get(
        `/agents/${agentId}/kb/documents?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )
      expect(r.status).toBe(200)
      seen.push(...r.body.data.map((d: any) => d.doc_id))
      cursor = r.body.pagination.next_cursor
      expect(r.body.pagination.has_more).toBe(cursor !== null)
    } while (cursor)
    expect(seen).toEqual(all)
    const first = await t.api.get(`/agents/${agentId}/kb/documents?kind=file&limit=1`)
    expect(first.body.pagination.has_more).toBe(true)
    const c = encodeURIComponent(first.body.pagination.next_cursor)
    expect((await t.api.get(`/agents/${agentId}/kb/documents?kind=file&limit=1&cursor=${c}`)).status).toBe(200)
    expect(err(await t.api.get(`/agents/${agentId}/kb/documents?kind=text&limit=1&cursor=${c}`)).code).toBe(
      'invalid_cursor',
    )
  })
})

describe('errors', () => {
  it('invalid_url for private and loopback hosts and other schemes', async () => {
    verifies('kb.documents', 'kb.url-safety')
    for (const url of [
      'http://10.0.0.1/',
      'http://localhost/',
      'ftp://example.com/',
      'http://169.254.169.254/latest/',
    ]) {
      for (const mode of ['page', 'site']) {
        const r = await t.api.post(`/agents/${agentId}/kb/documents`, { url, mode })
        expect(r.status, `${url} ${mode}`).toBe(400)
        expect(err(r)).toMatchObject({ code: 'invalid_url', field: 'url' })
      }
    }
  })

  it('validation_error: missing title or text, no recognisable shape, bad mode, unknown file type', async () => {
    verifies('kb.documents')
    const post = (b: unknown) => t.api.post(`/agents/${agentId}/kb/documents`, b)
    expect(err(await post({ text: 'x' }))).toMatchObject({ code: 'validation_error', field: 'title' })
    expect(err(await post({ title: 'x' }))).toMatchObject({ code: 'validation_error', field: 'text' })
    const none = err(await post({ language: 'en' }))
    expect(none.code).toBe('validation_error')
    expect(none.message).toMatch(/no recognisable shape/)
    expect(err(await post({}))).toMatchObject({ code: 'validation_error' })
    expect(err(await post({ url: `${kbSite.origin}/`, mode: 'everything' }))).toMatchObject({
      code: 'validation_error',
      field: 'mode',
    })
    expect(err(await post({ url: `${kbSite.origin}/` }))).toMatchObject({ code: 'validation_error', field: 'mode' })
    expect(err(await post({ title: 'x', text: 'y', colour: 'red' }))).toMatchObject({
      code: 'unsupported_field',
      field: 'colour',
    })
    const exe = await upload(t.key, `/agents/${agentId}/kb/documents`, {
      data: new Uint8Array([0x4d, 0x5a, 0, 1, 2, 3]),
      name: 'setup.exe',
      type: 'application/x-msdownload',
    })
    expect(exe.status).toBe(400)
    expect(exe.body.error).toMatchObject({ code: 'validation_error', field: 'file' })
    const fakePdf = await upload(t.key, `/agents/${agentId}/kb/documents`, {
      data: 'not a pdf',
      name: 'x.pdf',
      type: 'application/pdf',
    })
    expect(fakePdf.body.error).toMatchObject({ code: 'validation_error', field: 'file' })
    const noFile = await upload(
      t.key,
      `/agents/${agentId}/kb/documents`,
      { data: 'hello', name: 'a.txt' },
      { colour: 'red' },
    )
    expect(noFile.body.error).toMatchObject({ code: 'unsupported_field', field: 'colour' })
  })

  it('insufficient_scope without kb:write; kb:read still lists', async () => {
    verifies('kb.documents')
    const k = await master.post(`/users/${t.userId}/credentials`, { name: 'kb-read', scopes: ['kb:read'] })
    expect(k.status).toBe(201)
    const r = await t.api.post(`/agents/${agentId}/kb/documents`, { title: 'x', text: 'y' }, { key: k.body.secret })
    expect(r.status).toBe(403)
    expect(err(r).code).toBe('insufficient_scope')
    const u = await upload(k.body.secret, `/agents/${agentId}/kb/documents`, { data: 'hello', name: 'a.txt' })
    expect(u.body.error.code).toBe('insufficient_scope')
    expect((await t.api.get(`/agents/${agentId}/kb/documents`, { key: k.body.secret })).status).toBe(200)
  })

  it('plan_limit_reached: a trial agent takes 20 files; the 21st is 403', async () => {
    verifies('kb.documents')
    for (let i = 0; i < 20; i++) {
      const r = await trial.api.post(`/agents/${trialAgentId}/kb/documents`, {
        title: `Note ${i}`,
        text: `Fact number ${i}.`,
      })
      expect(r.status, r.text).toBe(202)
    }
    const over = await trial.api.post(`/agents/${trialAgentId}/kb/documents`, {
      title: 'Note 21',
      text: 'One too many.',
    })
    expect(over.status).toBe(403)
    expect(err(over).code).toBe('plan_limit_reached')
    const file = await upload(trial.key, `/agents/${trialAgentId}/kb/documents`, { data: 'hello', name: 'a.txt' })
    expect(file.body.error.code).toBe('plan_limit_reached')
    const limits = (await trial.api.get(`/accounts/${trial.accountId}/limits`)).body.quotas
    expect(limits.kb_documents.used).toBe(20)
  })

  it('413 payload_too_large for a multipart body above 10 MB sent chunked, answered before it is all sent', async () => {
    verifies('kb.documents')
    const boundary = '----kbtest'
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`
    const body = Buffer.concat([
      Buffer.from(head),
      Buffer.alloc(12 * 1024 * 1024, 'a'),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ])
    // No content-length: chunked, offered in 64 KB chunks, and no more than 11 MB of it.
    const r = await pumpedPost(
      `${base}/agents/${agentId}/kb/documents`,
      { authorization: `Bearer ${t.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      11 * 1024 * 1024,
    )
    expect(r.status).toBe(413)
    expect(JSON.parse(r.body).error.code).toBe('payload_too_large')
    // The client stops offering after 11 MB without ending the body: only a server that counts while
    // the body streams (rather than buffering it whole) can answer at all.
    expect(r.sent).toBeLessThan(body.length)
  })
})

describe('tenancy and ids', () => {
  it("another tenant's agent and document answer 404", async () => {
    verifies('tenancy.kb')
    const mine = (await t.api.get(`/agents/${agentId}/kb/documents?limit=1`)).body.data[0].doc_id
    expect(err(await trial.api.get(`/agents/${agentId}/kb/documents`)).code).toBe('agent_not_found')
    expect(err(await trial.api.post(`/agents/${agentId}/kb/documents`, { title: 'x', text: 'y' })).code).toBe(
      'agent_not_found',
    )
    expect((await trial.api.get(`/agents/${agentId}/kb/documents/${mine}`)).status).toBe(404)
    expect((await trial.api.patch(`/agents/${agentId}/kb/documents/${mine}`, { keep_verbatim: true })).status).toBe(404)
    // Another agent's path with this document: not found either.
    expect((await trial.api.get(`/agents/${trialAgentId}/kb/documents/${mine}`)).status).toBe(404)
    expect(err(await trial.api.get(`/accounts/${t.accountId}/agents/${agentId}/kb/documents`)).code).toBe(
      'agent_not_found',
    )
  })

  it('invalid_id for malformed document and agent ids', async () => {
    verifies('kb.documents')
    expect(err(await t.api.get(`/agents/${agentId}/kb/documents/doc_x1`))).toMatchObject({ code: 'invalid_id' })
    expect(err(await t.api.get(`/agents/${agentId}/kb/documents/42`))).toMatchObject({ code: 'invalid_id' })
    expect(err(await t.api.patch(`/agents/${agentId}/kb/documents/doc_f`, { keep_verbatim: true }))).toMatchObject({
      code: 'invalid_id',
    })
    expect(err(await t.api.get('/agents/nope/kb/documents')).code).toBe('invalid_id')
  })
})
