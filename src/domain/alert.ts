// What an operator alert can be about (decision 120) and where it stands. The kinds grew with their migrations (065;
// screening_hit: 092; screening_list_rejected: 097; books_behind_chain and database_not_synchronous: 104).
export const ALERT_KINDS = [
  'low_gas',
  'reconciliation_mismatch',
  'screening_hit',
  'screening_list_rejected',
  'books_behind_chain',
  'database_not_synchronous',
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
export type AlertStatus = 'open' | 'resolved';
