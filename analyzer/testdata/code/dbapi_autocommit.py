# This file turns autocommit on: every statement commits at once, so a
# given cursor's INSERT and the currval() after it are two transactions.


def open_session(conn):
    conn.autocommit = True


def record_sample(cu, patient):
    cu.execute("INSERT INTO samples (patient_id) VALUES (%s)", (patient,))
    cu.execute("SELECT currval('samples_id_seq')")  # want sequence-session
    return cu.fetchone()[0]
