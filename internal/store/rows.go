package store

import "database/sql"

// Scanner is one row to read: *sql.Row, *sql.Rows, or a wrapper of them.
type Scanner interface{ Scan(dest ...any) error }

// Collect reads every row of rows with scan, in order, and closes rows: the
// one loop over a query's rows. The first error (a scan's, or the rows')
// ends it.
func Collect[T any](rows *sql.Rows, scan func(Scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Flag stores a bool in an INTEGER 0/1 column: the same on both engines (pgx
// does not encode a Go bool as an integer).
func Flag(b bool) int {
	if b {
		return 1
	}
	return 0
}
