package app

func open(ctx context.Context) (*pgxpool.Pool, error) {
	// pgx sends unknown URL parameters as startup parameters.
	return pgxpool.New(ctx, "postgres://app@db/app?search_path=tenant&pool_max_conns=10") // want startup-parameter:error
}
