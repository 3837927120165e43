import knex from "knex";

describe("tenants", () => {
  it("runs in a transaction it rolls back", async () => {
    const trx = await db.transaction();
    await trx.raw("SET search_path TO tenant_a, public");
    await trx.raw("CREATE TEMP TABLE scratch (id int)");
    await trx.rollback();
  });

  it("commits", async () => {
    const trx = await db.transaction();
    await trx.raw("SET search_path TO app"); // want session-set:critical
    await trx.commit();
  });
});
