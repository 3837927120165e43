"""Test fixtures whose transactions always roll back."""
import psycopg
import pytest


@pytest.fixture
def conn_in_tenant(engine):
    connection = engine.connect()
    trans = connection.begin()
    connection.execute(text("SET search_path TO tenant_a, public"))
    connection.execute(text("CREATE TEMP TABLE scratch (id int)"))
    yield connection
    trans.rollback()
    connection.close()


def test_force_rollback(conn):
    with conn.transaction(force_rollback=True):
        conn.execute("SET statement_timeout = '1s'")
        conn.execute("SELECT pg_advisory_lock(1)")  # want advisory-lock-session:error
    conn.execute("SET work_mem = '64MB'")  # want session-set:error


def save(engine):
    connection = engine.connect()
    trans = connection.begin()
    connection.execute(text("SET search_path TO app"))  # want session-set:critical
    trans.commit()
