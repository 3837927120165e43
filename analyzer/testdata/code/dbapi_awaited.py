# Awaited execute calls are not DB-API's (asyncpg's connections, which
# autocommit, look the same without their import in this file).


async def record_sample(conn, patient):
    await conn.execute("INSERT INTO samples (patient_id) VALUES ($1)", patient)
    return await conn.fetchval("SELECT currval('samples_id_seq')")  # want sequence-session
