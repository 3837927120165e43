<?php
// PHPUnit assertions compare what a fake connection recorded with the
// text the test expects: the strings are expected text, not statements.

use PHPUnit\Framework\TestCase;

final class LastIdTest extends TestCase
{
    public function testLastIdReadsLastval(): void
    {
        $conn = new RecordingConnection();
        $repo = new OrderRepository($conn);
        $repo->lastId();
        $this->assertSame(['SELECT lastval()'], $conn->sent);
        self::assertEquals("SELECT currval('orders_id_seq')", $conn->sent[0]);
        static::assertContains('SELECT currval(\'orders_id_seq\')', $conn->sent);
        $this->assertStringContainsString(
            "SELECT lastval()",
            $conn->log()
        );
    }

    public function testSendsLastval(): void
    {
        // A statement the test itself sends is still one.
        $this->pdo->query('SELECT lastval()'); // want sequence-session
    }
}
