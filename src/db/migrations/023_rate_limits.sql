-- Per-merchant request counters shared by every api process (decision 93): one row per merchant, a fixed one-minute
-- window. UNLOGGED: no WAL per request, and after a crash the counters simply start again empty.
CREATE UNLOGGED TABLE rate_limit_windows (
  key           text PRIMARY KEY,
  window_start  timestamptz NOT NULL,
  hits          integer NOT NULL
);
