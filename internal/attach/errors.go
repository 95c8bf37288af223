package attach

import (
	"errors"
	"fmt"

	"github.com/mailgate/mailgate/internal/mailmsg"
)

// Reasons a path is refused, wrapped in *PathError (test with errors.Is).
var (
	ErrDisabled   = errors.New("sending attachments is disabled: no attachment folder is configured")
	ErrOutside    = errors.New("not inside the attachment folder")
	ErrNotFound   = errors.New("no such file")
	ErrDirectory  = errors.New("a directory, not a file")
	ErrNotRegular = errors.New("not a regular file")
	// ErrHardLinked: the file has other names (hard links), one of which
	// may be outside the folder (a token, a key): its bytes are not the
	// folder's to send. A copy is.
	ErrHardLinked = errors.New("it has other hard links, one of which may be outside the folder; put a copy in the folder instead")
)

// PathError reports a path refused for sending.
type PathError struct {
	Path   string // as given
	Folder string // the allowed folder, as configured
	Err    error  // one of the Err* reasons above, or an I/O error
}

func (e *PathError) Error() string {
	if errors.Is(e.Err, ErrDisabled) {
		return fmt.Sprintf("attachment %q refused: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("attachment %q refused: %v (attachments are sent only from %s)", e.Path, e.Err, e.Folder)
}

func (e *PathError) Unwrap() error { return e.Err }

// TooLargeError reports a file (or all files together, Total) over a cap.
type TooLargeError struct {
	Name  string // the file, or "" for the total
	Size  int64
	Limit int64
	Total bool
}

func (e *TooLargeError) Error() string {
	if e.Total {
		return fmt.Sprintf("attachments too large: together %s, over the %s limit for one email",
			mailmsg.FormatSize(e.Size), mailmsg.FormatSize(e.Limit))
	}
	return fmt.Sprintf("attachment %q too large: %s, over the %s limit", e.Name,
		mailmsg.FormatSize(e.Size), mailmsg.FormatSize(e.Limit))
}

// ChangedError reports a file that is no longer what was approved.
type ChangedError struct {
	Name                  string
	Path                  string
	WantSize, GotSize     int64
	WantSHA256, GotSHA256 string
}

func (e *ChangedError) Error() string {
	what := "its content changed"
	if e.WantSize != e.GotSize {
		what = fmt.Sprintf("its size changed from %d to %d bytes", e.WantSize, e.GotSize)
	}
	return fmt.Sprintf("attachment %q changed since it was approved (%s); ask for a new approval", e.Name, what)
}

// DownloadTooLargeError reports an attachment over the download cap.
type DownloadTooLargeError struct {
	Name  string
	Size  int64
	Limit int64
}

func (e *DownloadTooLargeError) Error() string {
	return fmt.Sprintf("attachment %q is %s, over the %s download limit; not saved", e.Name,
		mailmsg.FormatSize(e.Size), mailmsg.FormatSize(e.Limit))
}
