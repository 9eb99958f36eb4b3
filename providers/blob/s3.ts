// Blobs in any S3-compatible bucket, at SVC_BLOB_URL (https://KEY_ID:SECRET@host/bucket?region=…): no shared
// filesystem needed. config.ts checks the URL at load, so a bad one stops the boot before this opens.
import { createS3BlobStore, defineBlobProvider, parseS3Url } from '~/kit/blob-store'

export default defineBlobProvider({
  name: 's3',
  async open({ url }) {
    if (!url) throw new Error('SVC_BLOB_DRIVER=s3 requires SVC_BLOB_URL (https://KEY_ID:SECRET@host/bucket?region=…)')
    return createS3BlobStore(parseS3Url(url))
  },
})
