package archive

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mailgate/mailgate/internal/atomicfile"
)

// writeAtomic writes data to path, creating the folder (atomicfile: write,
// fsync, rename). Readers (a human's editor, git, another process) see the
// old file or the new one, never a torn one; a crash leaves at most a hidden
// temporary file, which the vault's sweep removes.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
