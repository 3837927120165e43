<?php
// A driver's last-insert-id method reads the sequence in a statement of
// its own, after the caller's INSERT: in autocommit, another transaction.
final class ArchiveDriver
{
    public function lastInsertedId(): int|false
    {
        if (!preg_match('/^INSERT\s+INTO\s+(\w+)/i', $this->lastQuery, $m)) {
            return false;
        }
        // The sequence is named after the table the last query inserted into.
        $res = pg_query($this->link, "SELECT currval('" . $m[1] . "_id_seq') AS id"); // want sequence-session
        return (int) pg_fetch_result($res, 0, 'id');
    }

    public function lastOfTable(array $row): int
    {
        $res = pg_query($this->link, 'SELECT currval(\'' . $row['seq'] . '\')'); // want sequence-session
        return (int) pg_fetch_result($res, 0, 0);
    }
}
