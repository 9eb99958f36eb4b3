export declare const WORKERS: Record<'extract-worker' | 'regex-worker' | 'mp3-worker', string>
export declare function bundleWorker(name: keyof typeof WORKERS, outfile?: string): Promise<URL>
