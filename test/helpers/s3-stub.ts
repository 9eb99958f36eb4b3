// An S3-compatible object store on 127.0.0.1 for the blob-driver tests (the external service, like the
// fake Twilio): path-style PUT, GET, HEAD and DELETE of objects in one bucket, kept in memory. A request
// without a SigV4 Authorization for the expected key id, region and service is refused 403, as S3 would.
import { createServer, type Server } from 'node:http'

export interface S3Stub {
  /** SVC_BLOB_URL for this store. */
  url: string
  objects: Map<string, Buffer>
  requests: { method: string; key: string; status: number }[]
  close(): Promise<void>
}

export async function startS3Stub(opts: { bucket?: string; keyId?: string; secret?: string; region?: string } = {}) {
  const bucket = opts.bucket ?? 'svc-blobs'
  const keyId = opts.keyId ?? 'AKIDTEST'
  const secret = opts.secret ?? 'stub/secret+key'
  const region = opts.region ?? 'eu-test-1'
  const objects = new Map<string, Buffer>()
  const requests: S3Stub['requests'] = []
  const credential = new RegExp(`^AWS4-HMAC-SHA256 Credential=${keyId}/\\d{8}/${region}/s3/aws4_request, `)
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = decodeURIComponent((req.url ?? '/').split('?')[0])
      const key = path.startsWith(`/${bucket}/`) ? path.slice(bucket.length + 2) : ''
      const answer = (status: number, body?: Buffer | string) => {
        requests.push({ method: req.method ?? '', key, status })
        res.writeHead(status, body === undefined ? {} : { 'content-length': Buffer.byteLength(body) })
        res.end(req.method === 'HEAD' ? undefined : body)
      }
      if (!credential.test(String(req.headers.authorization ?? '')) || !req.headers['x-amz-date'])
        return answer(403, '<Error><Code>SignatureDoesNotMatch</Code></Error>')
      if (!key) return answer(400, '<Error><Code>InvalidRequest</Code></Error>')
      if (req.method === 'PUT') {
        objects.set(key, Buffer.concat(chunks))
        return answer(200, '')
      }
      const found = objects.get(key)
      if (req.method === 'DELETE') {
        objects.delete(key)
        return answer(204)
      }
      if (!found) return answer(404, '<Error><Code>NoSuchKey</Code></Error>')
      return answer(200, found)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as { port: number }
  const stub: S3Stub = {
    url: `http://${encodeURIComponent(keyId)}:${encodeURIComponent(secret)}@127.0.0.1:${port}/${bucket}?region=${region}`,
    objects,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  }
  return stub
}
