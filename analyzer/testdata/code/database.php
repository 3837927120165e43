<?php
// A Laravel config/database.php: the pgsql connection's settings that
// Laravel's PostgresConnector runs as SETs on each new connection, and
// PDO's server-side prepares, which no connection here turns off.

return [
    'default' => env('DB_CONNECTION', 'pgsql'),

    'connections' => [
        'mysql' => [
            'driver' => 'mysql',
            'timezone' => '+00:00',
            'schema' => 'app',
        ],

        'pgsql' => [
            'driver' => 'pgsql', // want protocol-prepare:info
            'url' => env('DB_URL'),
            'host' => env('DB_HOST', '127.0.0.1'),
            'charset' => 'utf8',
            'application_name' => 'billing',
            'search_path' => 'tenant', // want session-set:critical
            'schema' => 'tenant',
            'sslmode' => 'prefer',
        ],

        'reporting' => array(
            'driver' => "pgsql", // want protocol-prepare:info
            'schema' => env('REPORTING_SCHEMA', 'reports'), // want session-set:critical
            'isolation_level' => 'serializable', // want session-set:error
            'synchronous_commit' => 'off', // want session-set:error
            'options' => [PDO::ATTR_TIMEOUT => 5],
        ),
    ],

        // Laravel turns emulated prepares on for a pooled connection.
        'pgbouncer' => [
            'driver' => 'pgsql',
            'pooled' => true,
            'direct' => ['host' => env('DB_DIRECT_HOST')],
        ],

        // Laravel's own default: pooled only when the environment says so.
        'pgsql-env' => [
            'driver' => 'pgsql', // want protocol-prepare:info
            'pooled' => env('DB_POOLED', false),
            'direct' => array_filter(['host' => env('DB_DIRECT_HOST')]),
        ],

    // Not a connection's array: a plain map of names.
    'labels' => ['search_path' => 'Search path', 'driver' => 'pgsql-ish'],
];
