-- Multi-tenant row-level security: the tenant context must be transaction-scoped.
CREATE TABLE invoices (id bigserial PRIMARY KEY, tenant_id bigint NOT NULL, total numeric);
ALTER TABLE invoices ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON invoices
  USING (tenant_id = current_setting('app.tenant_id')::bigint);

-- wrong: leaks the tenant to the next client of the server connection
SELECT set_config('app.tenant_id', '17', false); -- want session-set:critical
SET app.tenant_id = '17'; -- want session-set:critical
SET "app.current_tenant" TO '17'; -- want session-set:critical

-- right
BEGIN;
SELECT set_config('app.tenant_id', '17', true);
SELECT * FROM invoices;
COMMIT;

BEGIN;
SET LOCAL app.tenant_id = '17';
SELECT * FROM invoices;
COMMIT;

-- Supabase / PostgREST style request context
SELECT set_config('request.jwt.claims', '{"sub":"u1","role":"authenticated"}', true);
SELECT set_config('request.jwt.claim.sub', 'u1', false); -- want session-set:critical
