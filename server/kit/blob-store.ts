// Original uploads and call recordings are kept as blobs behind this small interface, in the store of the
// blob provider SVC_BLOB_DRIVER names (decisions "Blob storage"): `fs` (default, providers/blob/fs.ts)
// under SVC_BLOB_DIR, which instances sharing one database must share too (a shared mount), `s3` for any
// S3-compatible store (SVC_BLOB_URL), which needs no shared filesystem at all, or a plugin package's.
// The provider contract is the public kit's (BlobProvider); the host reads bytes as Buffers.
import type { BlobStore as KitBlobStore } from '@svc/plugin-kit'
import { createStorage, type Storage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'

export { type BlobProvider, type BlobProviderContext, defineBlobProvider } from '@svc/plugin-kit'

export interface BlobStore {
  put(key: string, data: Buffer): Promise<void>
  get(key: string): Promise<Buffer | null>
  remove(key: string): Promise<void>
}

/** A provider's store as the host uses it: what it answers, as a Buffer over the same bytes. */
export function hostBlobStore(store: KitBlobStore): BlobStore {
  return {
    put: (key, data) => store.put(key, data),
    async get(key) {
      const v = await store.get(key)
      if (v === null || v === undefined) return null
      return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength)
    },
    remove: (key) => store.remove(key),
  }
}

export function storageBlobStore(storage: Storage): BlobStore {
  return {
    async put(key, data) {
      await storage.setItemRaw(key, data)
    },
    async get(key) {
      const v = await storage.getItemRaw(key)
      if (v === null || v === undefined) return null
      if (Buffer.isBuffer(v)) return v
      // The s3 driver answers an ArrayBuffer, the fs driver a Buffer.
      return Buffer.from(v instanceof ArrayBuffer ? new Uint8Array(v) : (v as Uint8Array))
    },
    async remove(key) {
      await storage.removeItem(key)
    },
  }
}

/** The default store: files under `dir` (SVC_BLOB_DIR, default `<dataDir>/blobs`). */
export function createFsBlobStore(dir: string): BlobStore {
  return storageBlobStore(createStorage({ driver: fsDriver({ base: dir }) }))
}

/** An S3-compatible bucket, from the parts config.ts read out of SVC_BLOB_URL. */
export interface S3Location {
  endpoint: string
  bucket: string
  region: string
  accessKeyId: string
  secretAccessKey: string
}

/**
 * SVC_BLOB_URL for the s3 driver: `https://KEY_ID:SECRET@host[:port]/bucket[?region=…]` (path-style, the
 * form every S3-compatible store answers; key id and secret URL-encoded). Throws a message naming what is
 * missing.
 */
export function parseS3Url(raw: string): S3Location {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    throw new Error('SVC_BLOB_URL is not a URL; expected https://KEY_ID:SECRET@host/bucket?region=…')
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('SVC_BLOB_URL must be http:// or https://')
  const bucket = decodeURIComponent(u.pathname.replace(/^\/+|\/+$/g, ''))
  if (!bucket || bucket.includes('/')) throw new Error('SVC_BLOB_URL must name one bucket as its path: …/bucket')
  if (!u.username || !u.password)
    throw new Error('SVC_BLOB_URL must carry the access key id and secret: https://KEY_ID:SECRET@host/bucket')
  return {
    endpoint: `${u.protocol}//${u.host}`,
    bucket,
    region: u.searchParams.get('region') || 'us-east-1',
    accessKeyId: decodeURIComponent(u.username),
    secretAccessKey: decodeURIComponent(u.password),
  }
}

/** An S3-compatible bucket's store (the s3 driver and its signer, aws4fetch, load only when chosen). */
export async function createS3BlobStore(location: S3Location): Promise<BlobStore> {
  const { default: s3Driver } = await import('unstorage/drivers/s3')
  return storageBlobStore(createStorage({ driver: s3Driver({ ...location, bulkDelete: false }) }))
}
