package approval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/atomicfile"
)

// tmpPrefix names the files a decision holds aside while it moves a
// request (decide.go), and named the temporary files of the writer before
// atomicfile; atomicfile.IsTemp recognises today's. Readers skip both (every dot file is
// skipped), so a leftover is harmless to the protocol; it only clutters the
// folder a human looks at.
const tmpPrefix = ".tmp-"

// SweepTemp removes the temporary files a killed process left in the vault's
// folders, when they are older than minAge. A live write lasts milliseconds,
// so with minAge of minutes or more no writer can still own the file. Only
// regular files are removed (never a symlink or a folder), and the human's
// own files are never touched: the names are mailgate's. A request a killed
// decision held aside is never removed: it is recovered (recover.go). It
// returns how many files it removed or recovered; a folder that cannot be
// read is reported but does not stop the others.
func (v *Vault) SweepTemp(minAge time.Duration) (int, error) {
	cutoff := v.o.Now().Add(-minAge)
	removed, errs := v.recoverDecisions(minAge)
	for _, d := range []string{DirPending, DirApproved, DirRejected, DirDone, DirLogs} {
		dir := filepath.Join(v.root, d)
		entries, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("sweeping %s: %w", d, err))
			continue
		}
		for _, e := range entries {
			if !(strings.HasPrefix(e.Name(), tmpPrefix) || atomicfile.IsTemp(e.Name())) || !e.Type().IsRegular() ||
				strings.HasPrefix(e.Name(), decidePrefix) { // a request held by a decision: recovered, never removed
				continue
			}
			info, err := e.Info()
			if err != nil || info.ModTime().After(cutoff) {
				continue // gone already, or possibly still being written
			}
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("sweeping %s: %w", d, err))
				continue
			}
			removed++
		}
	}
	return removed, errors.Join(errs...)
}
