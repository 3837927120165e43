package db

import "github.com/jackc/pgx/v5/pgxpool"

// pgx sends RuntimeParams as startup parameters.
func Pool(url, tenant string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = tenant // want startup-parameter:error
	cfg.ConnConfig.RuntimeParams["application_name"] = "billing"
	cfg.ConnConfig.Config.RuntimeParams = map[string]string{
		"statement_timeout": "5s", // want startup-parameter:error
		"TimeZone":          "UTC",
	}
	labels := map[string]string{"search_path": "not a parameter"}
	_ = labels
	return cfg, nil
}
