package attach

import (
	"errors"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mailgate/mailgate/internal/mailmsg"
)

// DefaultMaxDownloadBytes caps a saved attachment: Gmail delivers at most
// 25 MB messages, so no real attachment is larger.
const DefaultMaxDownloadBytes = 25_000_000

// DefaultInlineBytes is the largest text attachment returned inline.
const DefaultInlineBytes = 64 << 10

// DownloadDir is the download folder under a mailgate home.
func DownloadDir(home string) string { return filepath.Join(home, "downloads") }

// ErrNoFreeName is wrapped when every suffix up to the limit is taken.
var ErrNoFreeName = errors.New("no free file name")

// Downloads saves received attachments into one folder.
type Downloads struct {
	Dir      string // DownloadDir(home); created 0700 when missing
	MaxBytes int64  // 0 means DefaultMaxDownloadBytes
}

// saveHook, when set (tests only), runs before each file is created:
// where a racing process would swap the folder for a symlink.
var saveHook func()

// Save writes data under the sanitized name into the download folder and
// returns the path written. It never overwrites: when the name is taken it
// tries "name-2.ext", "name-3.ext", …. The file is created 0600 with
// O_EXCL, which also refuses to write through a symlink planted there.
func (d Downloads) Save(name string, data []byte) (string, error) {
	name = mailmsg.SanitizeFilename(name)
	limit := orDefault(d.MaxBytes, DefaultMaxDownloadBytes)
	if int64(len(data)) > limit {
		return "", &DownloadTooLargeError{Name: name, Size: int64(len(data)), Limit: limit}
	}
	if strings.TrimSpace(d.Dir) == "" {
		return "", errors.New("saving attachments: no download folder configured")
	}
	if err := os.MkdirAll(d.Dir, 0o700); err != nil {
		return "", fmt.Errorf("creating download folder: %w", err)
	}
	// Files are created through an os.Root of the folder, and the folder
	// must be a real directory, not a symlink to elsewhere: a folder
	// swapped for one after this check is refused by the root (it was
	// opened before, and a name never holds a separator).
	if fi, err := os.Lstat(d.Dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("saving attachment: the download folder %s is not a directory (a symlink is refused)", d.Dir)
	}
	root, err := os.OpenRoot(d.Dir)
	if err != nil {
		return "", fmt.Errorf("opening download folder: %w", err)
	}
	defer root.Close()
	if fi, err := os.Lstat(d.Dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("saving attachment: the download folder %s was replaced while opening it", d.Dir)
	}
	ext := filepath.Ext(name)
	if ext == name {
		ext = ""
	}
	stem := strings.TrimSuffix(name, ext)
	for i := 1; i <= 9999; i++ {
		candidate := name
		if i > 1 {
			candidate = stem + "-" + strconv.Itoa(i) + ext
		}
		if saveHook != nil {
			saveHook()
		}
		path := filepath.Join(d.Dir, candidate)
		fh, err := root.OpenFile(candidate, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("saving attachment: %w", err)
		}
		_, err = fh.Write(data)
		if err == nil {
			err = fh.Sync()
		}
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			root.Remove(candidate)
			return "", fmt.Errorf("saving attachment: %w", err)
		}
		return path, nil
	}
	return "", fmt.Errorf("saving attachment %q: %w in %s", name, ErrNoFreeName, d.Dir)
}

// textExts are extensions read as text when the sender's type says nothing
// useful (application/octet-stream or none).
var textExts = map[string]bool{
	".txt": true, ".md": true, ".csv": true, ".tsv": true, ".json": true, ".log": true, ".yaml": true,
	".yml": true, ".xml": true, ".ics": true, ".vcf": true, ".ini": true, ".toml": true, ".diff": true,
	".patch": true, ".eml": true,
}

// InlineText returns data as text when it is small (at most max bytes; 0
// means DefaultInlineBytes), of a textual type (text/*, JSON, XML, YAML,
// CSV, or a text extension when the type is generic) and valid UTF-8
// without NUL, so a tool can show it instead of saving it. The text is
// passed through mailmsg.Sanitize: it is a stranger's, shown to an agent.
func InlineText(name, contentType string, data []byte, max int) (string, bool) {
	if max <= 0 {
		max = DefaultInlineBytes
	}
	if len(data) > max || !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		return "", false
	}
	if !isTextual(name, contentType) {
		return "", false
	}
	return mailmsg.Sanitize(string(data)), true
}

func isTextual(name, contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = ""
	}
	mt = strings.ToLower(mt)
	switch {
	case strings.HasPrefix(mt, "text/"):
		return true
	case strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/yaml", "application/x-yaml", "application/csv",
		"application/x-ndjson", "message/rfc822":
		return true
	case "", "application/octet-stream", "binary/octet-stream":
		return textExts[strings.ToLower(filepath.Ext(name))]
	}
	return false
}
