-- Row-level security for the multi-tenant API.
--
-- The API sets app.tenant_id at the start of every request and the
-- policies below read it. Reading a setting is harmless; SETTING it at
-- session level leaks the tenant to the next client of the server
-- connection, which is the worst possible bug here.

CREATE SCHEMA IF NOT EXISTS app;

CREATE TABLE app.tenants (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug       text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE app.projects (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  bigint NOT NULL REFERENCES app.tenants (id),
    name       text   NOT NULL,
    archived   boolean NOT NULL DEFAULT false
);

CREATE TABLE app.documents (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  bigint NOT NULL REFERENCES app.tenants (id),
    project_id bigint NOT NULL REFERENCES app.projects (id),
    title      text   NOT NULL,
    body       text,
    owner_id   bigint NOT NULL
);

CREATE ROLE app_authenticated NOLOGIN;
CREATE ROLE app_service NOLOGIN BYPASSRLS;
GRANT USAGE ON SCHEMA app TO app_authenticated, app_service;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA app TO app_authenticated;

ALTER TABLE app.projects ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.documents ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.documents FORCE ROW LEVEL SECURITY;

CREATE FUNCTION app.current_tenant_id() RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    AS 'SELECT nullif(current_setting(''app.tenant_id'', true), '''')::bigint';

CREATE POLICY projects_tenant_isolation ON app.projects
    USING (tenant_id = current_setting('app.tenant_id')::bigint)
    WITH CHECK (tenant_id = current_setting('app.tenant_id')::bigint);

CREATE POLICY documents_tenant_isolation ON app.documents
    AS RESTRICTIVE
    USING (tenant_id = app.current_tenant_id());

CREATE POLICY documents_owner_write ON app.documents
    FOR UPDATE
    USING (owner_id = nullif(current_setting('app.user_id', true), '')::bigint);

-- ---------------------------------------------------------------------
-- Queries the API sends (copied from the repository layer).
-- ---------------------------------------------------------------------

-- name: SetTenant (old middleware, still used by the admin panel)
SELECT set_config('app.tenant_id', $1, false); -- want session-set:critical

-- name: SetTenantTx (new middleware: inside the request transaction)
SELECT set_config('app.tenant_id', $1, true);

-- name: SetTenantGeneric (shared helper; is_local comes from the caller)
SELECT set_config('app.tenant_id', $1, $2); -- want session-set:warning

-- name: SetUser (old middleware)
SELECT set_config('app.user_id', $1::text, false), set_config('app.tenant_id', $2::text, true); -- want session-set:critical

-- name: SetTenantLegacyI18n (Mandant / Арендатор / テナント)
SELECT 'Mandant → Арендатор → テナント' AS label, set_config('app.tenant_id', $1, false); -- want session-set:critical

-- name: ListProjects
SELECT id, name
FROM app.projects
WHERE NOT archived
ORDER BY name;

-- name: CurrentTenant
SELECT current_setting('app.tenant_id', true) AS tenant_id;

-- name: ImpersonateAuthenticated (old middleware)
SET ROLE app_authenticated; -- want session-role:critical

-- name: BackToService
RESET ROLE; -- want session-role:warning

-- Request transaction as the new middleware sends it.
BEGIN;
SET LOCAL ROLE app_authenticated;
SELECT set_config('app.tenant_id', '42', true);
SELECT set_config('app.user_id', '1001', true);
SET LOCAL statement_timeout = '2s';
SELECT d.id, d.title
FROM app.documents d
JOIN app.projects p ON p.id = d.project_id
WHERE p.name = 'Roadmap';
COMMIT;

-- A background export that forgot the LOCAL.
BEGIN;
SET app.tenant_id = '42'; -- want session-set:critical
SET LOCAL ROLE app_authenticated;
SELECT count(*) FROM app.documents;
COMMIT;

-- Support tooling: look at a tenant with RLS switched off for the session.
SET row_security = off; -- want session-set:critical
SELECT * FROM app.documents WHERE tenant_id = 42 ORDER BY id LIMIT 50;
SET row_security TO on; -- want session-set:critical

-- PostgREST-style claims: transaction-scoped is fine, session is not.
SELECT set_config('request.jwt.claims', '{"sub":"1001","role":"app_authenticated"}', true);
SELECT set_config('request.jwt.claims', '{"sub":"1001"}', false); -- want session-set:critical

-- The role is a setting like any other; set_config('role', …, false) is SET ROLE.
SELECT set_config('role', 'app_authenticated', false); -- want session-role:critical
SELECT set_config('role', 'app_authenticated', true);

-- A tenant-aware search_path for the reporting schema per tenant.
SELECT set_config('search_path', 'tenant_' || $1 || ', public', false); -- want session-set:critical
SET SESSION AUTHORIZATION app_service; -- want session-role:critical
SELECT count(*) FROM app.tenants;
RESET SESSION AUTHORIZATION; -- want session-role:warning

-- Per-role defaults are stored in the catalog: fine.
ALTER ROLE app_service SET row_security = off;
ALTER DATABASE saas SET app.tenant_id = '';
