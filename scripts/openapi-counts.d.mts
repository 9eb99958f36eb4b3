export interface GapCounts {
  lists_without_pagination: number
  empty_schema_properties: number
  at_without_date_time: number
  string_typed_query_params: number
}
export declare function countGaps(doc: unknown): GapCounts
export declare function loadDocument(arg?: string): Promise<unknown>
