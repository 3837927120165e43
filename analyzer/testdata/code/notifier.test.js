// Test suite of a notifier: test names, expectations and UI labels that
// start with a command word are not statements.
import test from "ava";

test("listen reconnects", async (t) => {
  const err = await t.throwsAsync(db.listen("jobs"));
  expect(err.message).toBe("listen failed");
  expect(sql).to.equal("set search_path to " + schema);
  await page.click("Discard all");
});

export async function subscribe(sql, name) {
  const result = await sql`listen ${sql(name)}`; // want listen
  return result;
}

export async function commitPrepared(sql, id) {
  // A stray PREPARE TRANSACTION, far below, must not pull the LISTEN
  // above into a prepared (and so failing) transaction.
  await sql`prepare transaction '${id}'`;
}
