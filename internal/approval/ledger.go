package approval

import (
	"context"
	"errors"
	"time"
)

// Ledger remembers which requests mailgate itself issued, so an approval can
// be traced to a request the server wrote (see the package comment on
// self-approval). Implementations must be safe across processes.
type Ledger interface {
	// Issue records a request id and its content hash. Issuing the same
	// pair again is a no-op.
	Issue(ctx context.Context, id, sha string, t time.Time) error
	// Issued reports whether id was issued with sha and not yet consumed.
	Issued(ctx context.Context, id, sha string) (bool, error)
	// Consume marks id consumed. Exactly one caller succeeds; later ones get
	// ErrAlreadyClaimed, and an id never issued gets ErrNotIssued.
	Consume(ctx context.Context, id, sha string, t time.Time) error
}

// ErrNotIssued: the ledger has no record of the request.
var ErrNotIssued = errors.New("request not issued by mailgate")
