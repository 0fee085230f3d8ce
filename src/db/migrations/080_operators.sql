-- Named operators (decision 100): each holds a role and a bearer token, stored only as HMAC-SHA256(API_KEY_SALT,
-- token) like merchant API keys. `token_prefix` (sr_op_ and 8 random characters) tells tokens apart in listings.
-- A disabled operator keeps its row (the audit log names it) and is refused from the next request in every process.
CREATE TABLE operators (
  id               text PRIMARY KEY,
  name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  role             text NOT NULL CHECK (role IN ('viewer', 'operator', 'approver', 'admin')),
  token_hash       text NOT NULL UNIQUE,
  token_prefix     text NOT NULL,
  created_at       timestamptz NOT NULL,
  token_rotated_at timestamptz,
  disabled_at      timestamptz
);
CREATE INDEX operators_created ON operators (created_at, id);
