-- The audit log keyed (decision 186): records appended from now on are hashed with HMAC-SHA256 under AUDIT_KEY, a
-- secret kept out of the database, so that whoever can write the database cannot recompute a rewritten record's hash.
-- The records already written were hashed with plain SHA-256 and stay so; `unkeyed_through` is the last of them (0 on
-- a database that had none), and every record after it must verify under the key. The first keyed record chains onto
-- the last unkeyed one, so from then on those cannot be changed without the key either; until then anyone who could
-- write the database could have rewritten them undetected: they prove less. `unkeyed_seal` is that boundary sealed
-- under the key (written by the process that applies this migration, in its transaction): whoever can write the
-- database cannot move it up to pass a rewritten log off as written before the key.
ALTER TABLE audit_head ADD COLUMN unkeyed_through bigint, ADD COLUMN unkeyed_seal text;
UPDATE audit_head SET unkeyed_through = seq;
ALTER TABLE audit_head ALTER COLUMN unkeyed_through SET NOT NULL;
