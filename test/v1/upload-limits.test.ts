// Hostile uploads and bodies against a server of this file's own (its pid gives the RSS): zip bombs and
// oversized PDFs fail their document within the limits while the server stays up and small; an oversized
// body from plain fetch gets its 413 (drained, not EPIPE); a client that never stops is cut at the drain
// bound; a bad key gets its 401 before the server reads the upload.
import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { zipSync, strToU8 } from 'fflate'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { Document, Packer, Paragraph, TextRun } from 'docx'
import { createApi, type Api } from '../helpers/api'
import { buildAgent } from '../helpers/build'
import { pumpedPost } from '../helpers/pumped-post'
import { startServer, type TestServer } from '../helpers/server'
import { html, serveSite, type TestSite } from '../helpers/site'
import { createTenant, type Tenant } from '../helpers/tenant'
import { sleep, until } from '../helpers/wait'
import { verifies } from '../requirements'

let server: TestServer
let site: TestSite
let t: Tenant
let agentId: string
let docsPath: string

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
const rssKb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))![1])

beforeAll(async () => {
  server = await startServer({ env: { SVC_RATE_LIMITS: 'read=100000,write=100000,build=100000' } })
  site = await serveSite({
    '/': { body: html('Tern Cycles', '<h1>Tern Cycles</h1><p>A bicycle repair shop in Bristol.</p>') },
  })
  t = await createTenant(createApi(server.base, server.masterKey))
  agentId = await buildAgent(t.api, t.accountId, `${site.origin}/`, { language: 'en' })
  docsPath = `${server.base}/agents/${agentId}/kb/documents`
}, 180_000) // its own server and an agent build: slow on a loaded machine
afterAll(async () => {
  await site?.close()
  await server?.stop()
})

async function upload(data: Uint8Array, name: string, type: string, key = t.key) {
  const form = new FormData()
  form.append('file', new Blob([data as BlobPart], { type }), name)
  const res = await fetch(docsPath, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

async function settled(api: Api, docId: string) {
  return until(
    `document ${docId} settled`,
    async () => {
      const r = await api.get(`/agents/${agentId}/kb/documents/${docId}`)
      return r.body.status !== 'processing' ? r.body : null
    },
    60_000,
  )
}

async function healthMs() {
  const started = Date.now()
  const r = await fetch(`${server.base}/health`)
  expect(r.status).toBe(200)
  return Date.now() - started
}

/** A DOCX (zip) that mammoth reads, plus the extra entries given. */
function docx(documentText: string, extra: Record<string, Uint8Array> = {}) {
  const xml = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>${documentText}</w:t></w:r></w:p></w:body></w:document>`
  return zipSync({
    '[Content_Types].xml': strToU8(
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    ),
    '_rels/.rels': strToU8(
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    ),
    'word/document.xml': strToU8(xml),
    ...extra,
  })
}

/** Rewrites the uncompressed size of the entry `name` in both its local header and the central directory. */
function declareSize(zip: Uint8Array, name: string, size: number) {
  const b = Buffer.from(zip)
  for (let i = 0; i < b.length - 4; i++) {
    const sig = b.readUInt32LE(i)
    if (sig === 0x04034b50 && b.toString('utf8', i + 30, i + 30 + b.readUInt16LE(i + 26)) === name)
      b.writeUInt32LE(size, i + 22)
    if (sig === 0x02014b50 && b.toString('utf8', i + 46, i + 46 + b.readUInt16LE(i + 28)) === name)
      b.writeUInt32LE(size, i + 24)
  }
  return new Uint8Array(b)
}

describe('extraction bombs (decisions "Limits on hostile work")', () => {
  it('a DOCX entry that expands more than 100:1 fails before extraction; health answers and RSS stays flat', async () => {
    verifies('kb.upload-limits')
    const before = rssKb()
    // 8 MB of zeros deflate to about 8 KB: 1000:1.
    const bomb = docx('Harmless looking.', { 'word/media/zeros.bin': new Uint8Array(8 * 1024 * 1024) })
    expect(bomb.length).toBeLessThan(64 * 1024)
    const r = await upload(bomb, 'ratio.docx', DOCX_TYPE)
    expect(r.status).toBe(202)
    const doc = await settled(t.api, r.body.doc_id)
    expect(doc.status).toBe('failed')
    expect(doc.error).toMatch(/^The file could not be read within the limits: an entry expands more than 100:1/)
    expect(await healthMs()).toBeLessThan(1000)
    const after = rssKb()
    console.log(
      `[upload-limits] ratio bomb: server VmRSS ${before} kB before, ${after} kB after (${after - before} kB)`,
    )
    expect(after - before).toBeLessThan(64 * 1024)
  })

  it('a DOCX whose document expands past 50 MB in total fails; the server does not balloon', async () => {
    verifies('kb.upload-limits')
    const before = rssKb()
    // 66 MB of text in word/document.xml (about 200 KB deflated): the total is judged before the ratio.
    const text = 'lorem ipsum '.repeat(5.5 * 1024 * 1024)
    const bomb = docx(text)
    expect(bomb.length).toBeLessThan(10 * 1024 * 1024)
    // Deflating took seconds with the loop blocked: let the client see the server's keep-alive closes first.
    await sleep(100)
    const r = await upload(bomb, 'total.docx', DOCX_TYPE)
    expect(r.status).toBe(202)
    const doc = await settled(t.api, r.body.doc_id)
    expect(doc.status).toBe('failed')
    expect(doc.error).toMatch(/^The file could not be read within the limits: the archive expands to more than 50 MB/)
    expect(await healthMs()).toBeLessThan(1000)
    const after = rssKb()
    console.log(
      `[upload-limits] 66 MB docx: server VmRSS ${before} kB before, ${after} kB after (${after - before} kB)`,
    )
    expect(after - before).toBeLessThan(64 * 1024)
  })

  it('a zip entry that inflates beyond the size its directory declares fails (lying headers)', async () => {
    verifies('kb.upload-limits')
    // 8 MB of text declared as 512 KB: within the total and below the ratio floor, so only inflating counts.
    const lying = declareSize(
      docx('Lies.', { 'word/media/big.txt': strToU8('x'.repeat(8 * 1024 * 1024)) }),
      'word/media/big.txt',
      512 * 1024,
    )
    const r = await upload(lying, 'lying.docx', DOCX_TYPE)
    const doc = await settled(t.api, r.body.doc_id)
    expect(doc.status).toBe('failed')
    expect(doc.error).toBe(
      'The file could not be read within the limits: an entry expands beyond the size its archive declares.',
    )
  })

  it('a PDF of more than 500 pages fails with the page limit; a short PDF and a DOCX still extract', async () => {
    verifies('kb.upload-limits', 'kb.documents')
    const long = await PDFDocument.create()
    const font = await long.embedFont(StandardFonts.Helvetica)
    for (let i = 0; i < 501; i++) long.addPage([200, 200]).drawText(`Page ${i + 1}`, { x: 20, y: 100, size: 12, font })
    const big = await upload(await long.save(), 'long.pdf', 'application/pdf')
    expect(big.status).toBe(202)

    const short = await PDFDocument.create()
    const f2 = await short.embedFont(StandardFonts.Helvetica)
    short.addPage([600, 800]).drawText('Tyres are fitted while you wait.', { x: 50, y: 700, size: 12, font: f2 })
    const pdf = await upload(await short.save(), 'tyres.pdf', 'application/pdf')
    const word = new Document({
      sections: [{ children: [new Paragraph({ children: [new TextRun('Brake pads cost 12 pounds a pair.')] })] }],
    })
    const dx = await upload(new Uint8Array(await Packer.toBuffer(word)), 'brakes.docx', DOCX_TYPE)
    const md = await upload(strToU8('# Hours\n\nOpen   \t\n\n\n\nsix days a week.\n'), 'hours.md', 'text/markdown')

    const bigDoc = await settled(t.api, big.body.doc_id)
    expect(bigDoc.status).toBe('failed')
    expect(bigDoc.error).toBe(
      'The file could not be read within the limits: the PDF has 501 pages; at most 500 are read. Split it into smaller files.',
    )
    const pdfDoc = await settled(t.api, pdf.body.doc_id)
    expect(pdfDoc, JSON.stringify(pdfDoc)).toMatchObject({ status: 'indexed', error: null })
    expect(pdfDoc.text).toContain('Tyres are fitted while you wait.')
    const dxDoc = await settled(t.api, dx.body.doc_id)
    expect(dxDoc, JSON.stringify(dxDoc)).toMatchObject({ status: 'indexed' })
    expect(dxDoc.text).toContain('Brake pads cost 12 pounds a pair.')
    const mdDoc = await settled(t.api, md.body.doc_id)
    expect(mdDoc, JSON.stringify(mdDoc)).toMatchObject({ status: 'indexed' })
    expect(mdDoc.text).toBe('# Hours\n\nOpen\n\nsix days a week.')
  })

  it('extracted text over 2,000,000 characters fails with the text limit', async () => {
    verifies('kb.upload-limits')
    const text = Array.from({ length: 2_100_000 / 10 }, (_, i) => `w${String(i).padStart(8, '0')} `).join('')
    const r = await upload(strToU8(text), 'long.txt', 'text/plain')
    const doc = await settled(t.api, r.body.doc_id)
    expect(doc.status).toBe('failed')
    expect(doc.error).toMatch(
      /^The file could not be read within the limits: its text is longer than 2,000,000 characters/,
    )
  })
})

describe('oversized bodies from ordinary clients (drain before close)', () => {
  it('plain fetch with FormData of 11 MB gets 413 payload_too_large, not EPIPE', async () => {
    verifies('platform.body-drain')
    const form = new FormData()
    form.append('file', new Blob([new Uint8Array(11 * 1024 * 1024).fill(97)], { type: 'text/plain' }), 'big.txt')
    const res = await fetch(docsPath, { method: 'POST', headers: { authorization: `Bearer ${t.key}` }, body: form })
    expect(res.status).toBe(413)
    expect((await res.json()).error.code).toBe('payload_too_large')
    expect(await healthMs()).toBeLessThan(1000)
  })

  it('plain fetch with a JSON body over 2 MB gets 413 payload_too_large', async () => {
    verifies('platform.body-drain')
    const body = JSON.stringify({ title: 'Big', text: 'a'.repeat(3 * 1024 * 1024) })
    const res = await fetch(docsPath, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body,
    })
    expect(res.status).toBe(413)
    expect((await res.json()).error.code).toBe('payload_too_large')
  })

  it('a client that never stops sending gets its 413 and is cut after the 64 MB drain bound', async () => {
    verifies('platform.body-drain')
    const u = new URL(docsPath)
    const chunk = Buffer.alloc(1024 * 1024, 97)
    const outcome = await new Promise<{ status: number | null; sent: number; cut: boolean }>((resolve) => {
      let status: number | null = null
      let sent = 0
      const req = httpRequest(
        {
          hostname: u.hostname,
          port: u.port,
          path: u.pathname,
          method: 'POST',
          headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        },
        (res) => {
          status = res.statusCode!
          res.resume()
        },
      )
      const done = (cut: boolean) => {
        clearTimeout(guard)
        resolve({ status, sent, cut })
      }
      // Far past the bound (64 MB + the 2 MB cap) with no cut means the server drains without limit.
      const guard = setTimeout(() => {
        req.destroy()
        done(false)
      }, 40_000)
      req.on('error', () => done(true))
      req.on('close', () => done(true))
      const pump = () => {
        if (sent > 200 * 1024 * 1024) {
          req.destroy()
          return done(false)
        }
        sent += chunk.length
        req.write(chunk, (e) => {
          if (!e) setImmediate(pump)
        })
      }
      pump()
    })
    console.log(
      `[upload-limits] endless client: status ${outcome.status}, ${Math.round(outcome.sent / 1024 / 1024)} MB offered before the cut`,
    )
    expect(outcome.status).toBe(413)
    expect(outcome.cut).toBe(true)
    expect(outcome.sent).toBeGreaterThan(64 * 1024 * 1024)
    expect(outcome.sent).toBeLessThan(100 * 1024 * 1024)
    expect(await healthMs()).toBeLessThan(1000)
  })
})

describe('authentication before the body is read', () => {
  const boundary = '----authfirst'
  const multipart = (size: number) =>
    Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`,
      ),
      Buffer.alloc(size, 97),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ])

  it('a 9 MB upload with a bad key gets 401 after 1 MB is sent: the server does not wait for (or buffer) the rest', async () => {
    verifies('platform.auth-before-body')
    const body = multipart(9 * 1024 * 1024)
    const started = Date.now()
    // Content-Length declares the whole 9 MB; the client offers 1 MB and then waits.
    const r = await Promise.race([
      pumpedPost(
        docsPath,
        {
          authorization: 'Bearer svc_pk_live_not-a-real-key-000000000000000000000000',
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(body.length),
        },
        body,
        1024 * 1024,
      ),
      sleep(10_000).then(() => ({ status: 0, body: 'no answer in 10 s', sent: -1 })),
    ])
    const ms = Date.now() - started
    console.log(`[upload-limits] bad key, 9 MB declared, 1 MB sent: ${r.status} after ${ms} ms`)
    expect(r.status, r.body).toBe(401)
    expect(JSON.parse(r.body).error.code).toMatch(/^invalid_/)
    expect(r.sent).toBeLessThanOrEqual(1024 * 1024)
  })

  it('no Authorization header at all: 401 before the body is read', async () => {
    verifies('platform.auth-before-body')
    const body = multipart(9 * 1024 * 1024)
    const r = await Promise.race([
      pumpedPost(
        docsPath,
        { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(body.length) },
        body,
        512 * 1024,
      ),
      sleep(10_000).then(() => ({ status: 0, body: 'no answer in 10 s', sent: -1 })),
    ])
    expect(r.status, r.body).toBe(401)
  })

  it('plain fetch with FormData of 9 MB and a bad key gets 401, not EPIPE', async () => {
    verifies('platform.auth-before-body', 'platform.body-drain')
    const started = Date.now()
    const r = await upload(
      new Uint8Array(9 * 1024 * 1024).fill(97),
      'big.txt',
      'text/plain',
      'svc_pk_live_not-a-real-key-000000000000000000000000',
    )
    console.log(`[upload-limits] plain fetch, bad key, 9 MB: ${r.status} after ${Date.now() - started} ms`)
    expect(r.status).toBe(401)
    expect(await healthMs()).toBeLessThan(1000)
  })

  it('a good key still uploads (the lazy body reaches the handler)', async () => {
    verifies('kb.documents')
    const r = await upload(strToU8('Bells are fitted free.'), 'bells.txt', 'text/plain')
    expect(r.status).toBe(202)
    expect((await settled(t.api, r.body.doc_id)).text).toBe('Bells are fitted free.')
  })
})
