export declare const WIDGET_ENTRY: string
export declare const GZIP_BUDGET: number
export declare function buildWidget(opts?: { log?: boolean }): Promise<{
  code: string
  bytes: number
  gzipBytes: number
  hash: string
}>
