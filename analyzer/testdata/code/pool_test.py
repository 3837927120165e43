def test_reset(pool):
    def configure(conn):
        conn.execute("set timezone to '+1:00'")  # want session-set:info

    with pool.connection() as conn:
        conn.execute("reset all")  # want session-set:warning


def test_broken_transaction(conn):
    # A ROLLBACK without a BEGIN literal ends the driver's own transaction;
    # it does not undo the statements of the tests above.
    conn.execute("rollback")
