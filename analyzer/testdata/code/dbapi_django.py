# Django's connections autocommit outside transaction.atomic(): a cursor
# given to a function does not hold its caller's INSERT in one
# transaction with the read.
from django.db import connection


def record_sample(cursor, patient):
    cursor.execute("INSERT INTO samples (patient_id) VALUES (%s)", [patient])
    cursor.execute("SELECT currval('samples_id_seq')")  # want sequence-session
    return cursor.fetchone()[0]


def sample_count():
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM samples")
        return cursor.fetchone()[0]
