package archive

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mailgate/mailgate/internal/approval"
)

// writeAtomic writes data to path through a temporary file in the same
// folder, creating the folder (approval.WriteFile: write, fsync, rename).
// Readers (a human's editor, git, another process) see the old file or the
// new one, never a torn one; a crash leaves at most a hidden ".tmp-" file.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := approval.WriteFile(path, data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
