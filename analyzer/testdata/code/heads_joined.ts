export async function enter(client: Client, kind: string, key: number, materialized: string) {
  await client.query(`SELECT pg_advisory_${kind}(${key})`); // want advisory-lock-session:error
  await client.query(`
    WITH j AS ${materialized} (SELECT id FROM jobs LIMIT 1)
    SELECT pg_try_advisory_lock(id) FROM j -- want advisory-lock-session:error
  `);
}
