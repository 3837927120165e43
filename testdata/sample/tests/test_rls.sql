-- pgTAP: tenant isolation. Run with pg_prove against the test database.
BEGIN;
SELECT plan(6);

SELECT has_table('app', 'documents', 'documents table exists');
SELECT policies_are('app', 'documents', ARRAY['documents_tenant_isolation', 'documents_owner_write']);

-- fixtures
INSERT INTO app.tenants (slug) VALUES ('acme'), ('globex');
INSERT INTO app.projects (tenant_id, name)
SELECT id, 'Roadmap' FROM app.tenants;
INSERT INTO app.documents (tenant_id, project_id, title, owner_id)
SELECT p.tenant_id, p.id, 'Plan for ' || t.slug, 1
FROM app.projects p JOIN app.tenants t ON t.id = p.tenant_id;

-- act as the API would, transaction-scoped
SET LOCAL ROLE app_authenticated;
SELECT set_config('app.tenant_id', (SELECT id::text FROM app.tenants WHERE slug = 'acme'), true);

SELECT results_eq(
    'SELECT title FROM app.documents',
    $$VALUES ('Plan for acme')$$,
    'a tenant sees only its own documents'
);

SELECT is_empty(
    $$SELECT 1 FROM app.documents d JOIN app.tenants t ON t.id = d.tenant_id WHERE t.slug = 'globex'$$,
    'documents of other tenants are invisible'
);

-- the old helper: a session-level switch, undone by the ROLLBACK below
SET ROLE app_authenticated;
SELECT set_config('app.tenant_id', (SELECT id::text FROM app.tenants WHERE slug = 'globex'), false);

SELECT throws_ok(
    $$INSERT INTO app.documents (tenant_id, project_id, title, owner_id) VALUES (-1, -1, 'x', 1)$$,
    '42501',
    NULL,
    'cannot write into another tenant'
);

RESET ROLE;

SELECT lives_ok(
    $$SELECT app.current_tenant_id()$$,
    'current_tenant_id() works without the setting'
);

SELECT * FROM finish();
ROLLBACK;
