import { sql } from "./db";

export async function withTenant(db: Pool, tenant: string) {
  console.log(`SET ROLE for ${tenant}`);
  await db.query("SELECT set_config('app.tenant', $1, false)", [tenant]); // want session-set:critical
  await db.query(sql`SET LOCAL search_path = ${tenant}`);
  const re = /LISTEN (\w+)/g;
  await db.query(`
    DECLARE orders CURSOR WITH HOLD FOR -- want cursor-with-hold
    SELECT * FROM orders WHERE tenant = ${tenant}
  `);
  await db.query("SELECT " + "lastval()"); // want sequence-session
  throw new Error("PREPARE failed");
}
