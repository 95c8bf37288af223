package store

import (
	"context"
	"fmt"
	"io/fs"
)

// MigrateDialect applies component's migrations for db's engine: the files
// of fsys's dir/sqlite or dir/postgres (see MigrationsFor), through
// Migrate. It is the one call of a component whose schema is written per
// engine in those two folders.
func (db *DB) MigrateDialect(ctx context.Context, component string, fsys fs.FS, dir string) error {
	sub, err := db.MigrationsFor(fsys, dir)
	if err != nil {
		return fmt.Errorf("migrating %s: %w", component, err)
	}
	return db.Migrate(ctx, component, sub)
}
