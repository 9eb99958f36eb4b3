import type { Page } from '~/lib/keyset'

/** Catalogues are short and whole: one page, no cursor. */
export const wholePage = <T>(data: T[]): Page<T> => ({ data, limit: data.length, hasMore: false, nextCursor: null })
