// currval() and lastval() in the transaction of the INSERT that set them
// are safe behind a transaction pooler; in a later transaction they are not.
export async function addBadge(knex: Knex, name: string): Promise<number> {
  return knex.transaction(async (trx) => {
    await trx.raw('INSERT INTO badges (name) VALUES (?)', [name])
    const r = await trx.raw("SELECT currval('badges_id_seq') AS id")
    return r.rows[0].id
  })
}

export async function addBadgeOnPool(pool: Pool, name: string): Promise<number> {
  await pool.query('INSERT INTO badges (name) VALUES ($1)', [name])
  const r = await pool.query('SELECT lastval() AS id') // want sequence-session
  return r.rows[0].id
}
