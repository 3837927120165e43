# currval() and lastval() in the transaction of the INSERT that set them
# are safe behind a transaction pooler; in a later transaction they are not.
from django.db import connection, transaction


async def add_ticket(conn, title):
    async with conn.transaction():
        await conn.execute("INSERT INTO tickets (title) VALUES ($1)", title)
        return await conn.fetchval("SELECT currval('tickets_id_seq')")


def add_comment(cursor, body):
    with transaction.atomic():
        cursor.execute("INSERT INTO comments (body) VALUES (%s)", [body])
        cursor.execute("SELECT lastval()")
        return cursor.fetchone()[0]


@transaction.atomic
def add_tag(cursor, name):
    cursor.execute("INSERT INTO tags (name) VALUES (%s)", [name])
    cursor.execute("SELECT lastval()")
    return cursor.fetchone()[0]


def add_note(engine, text):
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO notes (text) VALUES (%s)", (text,))
        return conn.exec_driver_sql("SELECT lastval()").scalar()


async def add_ticket_autocommit(pool, title):
    # Two statements on the pool: two transactions, maybe two server
    # connections.
    await pool.execute("INSERT INTO tickets (title) VALUES ($1)", title)
    return await pool.fetchval("SELECT lastval()")  # want sequence-session


async def read_after(conn, title):
    async with conn.transaction():
        await conn.execute("INSERT INTO tickets (title) VALUES ($1)", title)
    return await conn.fetchval("SELECT currval('tickets_id_seq')")  # want sequence-session
