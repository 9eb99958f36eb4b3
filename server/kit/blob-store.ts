// Original uploads are kept as blobs behind this small interface, so the filesystem store (unstorage's
// fs driver under <dataDir>/blobs) can be swapped for S3 or another unstorage driver without touching
// the knowledge-base code.
import { createStorage, type Storage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'

export interface BlobStore {
  put(key: string, data: Buffer): Promise<void>
  get(key: string): Promise<Buffer | null>
  remove(key: string): Promise<void>
}

export function storageBlobStore(storage: Storage): BlobStore {
  return {
    async put(key, data) {
      await storage.setItemRaw(key, data)
    },
    async get(key) {
      const v = await storage.getItemRaw(key)
      if (v === null || v === undefined) return null
      return Buffer.isBuffer(v) ? v : Buffer.from(v as Uint8Array)
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
