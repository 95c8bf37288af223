package approval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mailgate/mailgate/internal/atomicfile"
)

// keptKind is a folder under Logs/ of files kept beside the requests for
// the approval page (the agent's HTML parts, the messages replies answer),
// each named by the hash of what it holds, which a request binds: written
// once, shared by every copy of the request, and shown only while it still
// hashes to its name.
type keptKind struct {
	dir, ext string
	field    string              // the request's field that binds the hash, for the error
	hash     func([]byte) string // how a file's name is computed from its bytes
	missing  error               // wrapped when the file is not there or no longer matches
}

var (
	keptHTML     = keptKind{dir: DirHTML, ext: ".html", field: "html_sha256", hash: func(b []byte) string { return htmlSHA256(string(b)) }, missing: ErrNoHTML}
	keptOriginal = keptKind{dir: DirOriginals, ext: ".md", field: "original_sha256", hash: sum, missing: ErrNoOriginal}
)

// keep writes data as the file named sha, unless it is there already (it
// then holds the same bytes). sha must be a lower-case hex hash: it names a
// file, so nothing else reaches the path.
func (v *Vault) keep(k keptKind, sha string, data []byte) error {
	if !isHex(sha) || strings.ToLower(sha) != sha {
		return fmt.Errorf("keeping %s: %q is not a lower-case SHA-256", k.dir, sha)
	}
	dir := filepath.Join(v.root, DirLogs, k.dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := atomicfile.WriteNew(filepath.Join(dir, sha+k.ext), data, 0o600); err != nil && !isExist(err) {
		return err
	}
	return nil
}

// readKept reads the file named sha (a lower-case hex hash), checked
// against its name: k.missing when it is not there or does not match, or
// sha is not such a hash (a request's field names the file).
func (v *Vault) readKept(k keptKind, sha string) ([]byte, error) {
	if !isHex(sha) || strings.ToLower(sha) != sha {
		return nil, k.missing
	}
	data, _, err := readRegular(filepath.Join(v.root, DirLogs, k.dir, sha+k.ext), v.o.MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, k.missing
	}
	if err != nil {
		return nil, err
	}
	if k.hash(data) != sha {
		return nil, fmt.Errorf("%w: the kept copy does not match %s", k.missing, k.field)
	}
	return data, nil
}
