export function pluginFiles(dir: string): string[]
