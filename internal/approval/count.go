package approval

import (
	"errors"
	"io/fs"
	"path/filepath"
)

// CountPending counts the requests waiting in root's Pending_Approval/,
// by the names List and the gate read (hidden and non-.md files are not
// requests), without parsing them: the metrics call it at every scrape.
func CountPending(root string) (int, error) {
	names, err := readDirNames(filepath.Join(root, DirPending))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if candidateName(name) {
			n++
		}
	}
	return n, nil
}
