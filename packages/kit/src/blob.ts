// A blob provider keeps uploaded originals and call recordings: one store per process, opened at boot and
// chosen by SVC_BLOB_DRIVER (the host's own are `fs` and `s3`). Keys are opaque paths ("uploads/acc_…/doc_…");
// several instances on one database must see the same store.

export interface BlobStore {
  /** Stores the bytes under `key`, replacing what was there. */
  put(key: string, data: Uint8Array): Promise<void>
  /** The bytes stored under `key`, or null when there are none. */
  get(key: string): Promise<Uint8Array | null>
  /** Forgets `key`; a key that is not there is no error. */
  remove(key: string): Promise<void>
}

export interface BlobProviderContext {
  /** SVC_BLOB_URL as set, or null: the provider parses its own form (and must never log it: it may hold a secret). */
  url: string | null
  /** SVC_BLOB_DIR: a folder of the host's the provider may use. */
  dir: string
}

export interface BlobProvider {
  name: string
  /** Opens the store once at boot; a throw stops the boot with its first line. */
  open(ctx: BlobProviderContext): BlobStore | Promise<BlobStore>
}

export const defineBlobProvider = (p: BlobProvider): BlobProvider => p
