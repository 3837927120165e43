def copy_table(cursor, table_name):
    cursor.execute(
        "CREATE TEMP TABLE %(table_name)s_copy AS SELECT * FROM %(table_name)s;"  # want temp-table
        % {"table_name": table_name}
    )
