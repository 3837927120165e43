<?php

use PHPUnit\Framework\TestCase;

final class TenantTest extends TestCase
{
    private PDO $pdo;

    protected function setUp(): void
    {
        $this->pdo = new PDO(getenv('DSN'), null, null, [PDO::ATTR_EMULATE_PREPARES => true]);
        $this->pdo->beginTransaction();
    }

    public function testTenantSchema(): void
    {
        $this->pdo->exec("SET search_path TO tenant_a, public");
        $this->pdo->exec("CREATE TEMP TABLE scratch (id int)");
    }

    protected function tearDown(): void
    {
        $this->pdo->rollBack();
    }
}
