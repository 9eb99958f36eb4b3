// Blobs as files under SVC_BLOB_DIR (default <data dir>/blobs): the default store. Instances sharing one
// database must share the folder (a shared mount), since any of them may read another's upload.
import { createFsBlobStore, defineBlobProvider } from '~/kit/blob-store'

export default defineBlobProvider({
  name: 'fs',
  open: ({ dir }) => createFsBlobStore(dir),
})
