/** One warning of the stack map pane (made by capture/segments.ts and query/warnings.ts). */
export interface Warning {
  level: 'info' | 'warn' | 'error';
  /** stable id for tests and docs */
  id:
    | 'map-nearly-full'
    | 'drops'
    | 'v7-reset-risk'
    | 'text-dump-across-reset'
    | 'generation-without-dump'
    | 'symbols-mismatch'
    | 'ambiguous-ids'
    | 'unresolved'
    | 'overlapping-traces'
    | 'segments';
  message: string;
}
