// Package attach is the file side of email attachments: which local files
// an agent may send, and where received attachments are saved.
//
// Why a package of its own: the paths come from an LLM agent, which a
// stranger's email can steer, so "attach ~/.ssh/id_ed25519" or a symlink
// planted in the allowed folder is the attack to design against, and the
// human approving a send must approve the very bytes that leave. Sending
// therefore works only from one folder the user configured, resolves
// symlinks before deciding, and binds each file by name, size and SHA-256
// so that a file changed between approval and send is refused. Saving
// never takes a path from the caller: files land in one download folder
// under the mailgate home, under sanitized names, never overwriting.
package attach

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mailgate/mailgate/internal/mailmsg"
)

// Default caps for sending. A message may be 25 MB once encoded
// (mailmsg.MaxMessageBytes) and base64 adds a third, so 18 MB of files
// leaves room for the body and headers.
const (
	DefaultMaxFileBytes  = 18_000_000
	DefaultMaxTotalBytes = 18_000_000
)

// Folder is the one folder attachments may be sent from.
type Folder struct {
	Dir           string // "" disables sending attachments
	MaxFileBytes  int64  // per file; 0 means DefaultMaxFileBytes
	MaxTotalBytes int64  // all files of one email; 0 means DefaultMaxTotalBytes
}

// File is one file checked for sending: what the approval binds.
type File struct {
	Name        string `json:"name"` // what recipients see: the given path's base name, sanitized
	Path        string `json:"path"` // absolute, symlinks resolved
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"` // hex
	ContentType string `json:"content_type"`
}

// Open checks every path and returns the files in order. A path is taken
// relative to the folder unless absolute; after symlinks are resolved it
// must name a regular file inside the folder (itself resolved), within the
// per-file cap, and all files together within the total cap.
func (f Folder) Open(paths []string) ([]File, error) {
	out := make([]File, 0, len(paths))
	var total int64
	for _, p := range paths {
		file, _, err := f.read(p, nil)
		if err != nil {
			return nil, err
		}
		total += file.Size
		if total > f.maxTotal() {
			return nil, &TooLargeError{Size: total, Limit: f.maxTotal(), Total: true}
		}
		out = append(out, file)
	}
	return out, nil
}

// Load reads a file checked by Open again, with every check of Open, and
// returns its bytes only if its size and SHA-256 are still the ones
// bound: *ChangedError otherwise. Call it right before sending, so what
// leaves is what was approved.
func (f Folder) Load(file File) ([]byte, error) {
	_, data, err := f.read(file.Path, &file)
	return data, err
}

// Recheck is Load without keeping the bytes.
func (f Folder) Recheck(file File) error {
	_, err := f.Load(file)
	return err
}

// Attachments loads every file (see Load) as message attachments.
func (f Folder) Attachments(files []File) ([]mailmsg.Attachment, error) {
	out := make([]mailmsg.Attachment, 0, len(files))
	var total int64
	for _, file := range files {
		data, err := f.Load(file)
		if err != nil {
			return nil, err
		}
		if total += int64(len(data)); total > f.maxTotal() {
			return nil, &TooLargeError{Size: total, Limit: f.maxTotal(), Total: true}
		}
		out = append(out, mailmsg.Attachment{Name: file.Name, ContentType: file.ContentType, Data: data})
	}
	return out, nil
}

func (f Folder) maxFile() int64  { return orDefault(f.MaxFileBytes, DefaultMaxFileBytes) }
func (f Folder) maxTotal() int64 { return orDefault(f.MaxTotalBytes, DefaultMaxTotalBytes) }

func orDefault(v, d int64) int64 {
	if v > 0 {
		return v
	}
	return d
}

// resolve returns the folder's real path, and the real path of p checked
// to lie inside it. The answer only decides which refusal the agent reads
// (outside, not found): the file itself is opened through an os.Root of
// the folder (read), so a component swapped for a symlink after this check
// cannot lead outside.
func (f Folder) resolve(p string) (dir, real string, err error) {
	if strings.TrimSpace(f.Dir) == "" {
		return "", "", ErrDisabled
	}
	if p == "" || strings.ContainsRune(p, 0) {
		return "", "", ErrNotFound
	}
	if dir, err = filepath.Abs(f.Dir); err != nil {
		return "", "", err
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return "", "", fmt.Errorf("attachment folder: %w", err)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	real, err = filepath.EvalSymlinks(p)
	if errors.Is(err, os.ErrNotExist) {
		return "", "", ErrNotFound
	} else if err != nil {
		return "", "", err
	}
	if real, err = filepath.Abs(real); err != nil {
		return "", "", err
	}
	if !within(dir, real) {
		return "", "", ErrOutside
	}
	return dir, real, nil
}

// beforeOpen, when set (tests only), runs between the path check and the
// open: where a racing process would swap a folder for a symlink.
var beforeOpen func(real string)

// rootError is the refusal for an os.Root access that failed: a path
// that escapes the root (a component swapped for a symlink leading out)
// is outside; a missing one not found.
func rootError(err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return ErrNotFound
	case strings.Contains(err.Error(), "escapes"):
		// os.Root's escape error is not exported (errPathEscapes).
		return ErrOutside
	}
	return err
}

// within reports whether path is dir or lies below it (both absolute and
// clean).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// read checks and reads one path. With want set (Load), the file must
// still match it.
func (f Folder) read(p string, want *File) (File, []byte, error) {
	refuse := func(err error) (File, []byte, error) {
		return File{}, nil, &PathError{Path: p, Folder: f.Dir, Err: err}
	}
	dir, real, err := f.resolve(p)
	if err != nil {
		return refuse(err)
	}
	rel, err := filepath.Rel(dir, real)
	if err != nil {
		return refuse(ErrOutside)
	}
	if beforeOpen != nil {
		beforeOpen(real)
	}
	// Every access from here is through the folder's os.Root: no path
	// component, whatever it has become since resolve, can lead outside
	// it (a symlink that does is refused as outside).
	root, err := os.OpenRoot(dir)
	if err != nil {
		return refuse(fmt.Errorf("attachment folder: %w", err))
	}
	defer root.Close()
	fi, err := root.Lstat(rel)
	if err != nil {
		return refuse(rootError(err))
	}
	switch {
	case fi.IsDir():
		return refuse(ErrDirectory)
	case !fi.Mode().IsRegular():
		return refuse(ErrNotRegular)
	}
	name := mailmsg.SanitizeFilename(filepath.Base(p))
	if want != nil {
		name = want.Name
	}
	if fi.Size() > f.maxFile() {
		return File{}, nil, &TooLargeError{Name: name, Size: fi.Size(), Limit: f.maxFile()}
	}
	fh, err := root.OpenFile(rel, readFlags, 0)
	if err != nil {
		return refuse(rootError(err))
	}
	defer fh.Close()
	// The file opened must be the one checked: a swap between Lstat and
	// open (a symlink or FIFO put in its place) is refused here.
	ofi, err := fh.Stat()
	if err != nil {
		return refuse(err)
	}
	if !ofi.Mode().IsRegular() || !os.SameFile(fi, ofi) {
		return refuse(ErrNotRegular)
	}
	if hardLinked(ofi) {
		return refuse(ErrHardLinked)
	}
	// Read whole (the cap bounds it): hashing, sniffing and Load's bytes
	// all come from this one read, so they describe the same content. The
	// buffer starts at the size the file has (io.ReadAll's doubling from
	// 512 bytes allocated and cleared twice a large file's size); a file
	// grown since still reads to the cap.
	buf := bytes.NewBuffer(make([]byte, 0, min(ofi.Size(), f.maxFile())+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(fh, f.maxFile()+1)); err != nil {
		return refuse(err)
	}
	data := buf.Bytes()
	n := int64(len(data))
	if n > f.maxFile() {
		return File{}, nil, &TooLargeError{Name: name, Size: n, Limit: f.maxFile()}
	}
	sum := sha256.Sum256(data)
	file := File{Name: name, Path: real, Size: n, SHA256: fmt.Sprintf("%x", sum),
		ContentType: mailmsg.DetectType(name, data)}
	if want != nil {
		file.ContentType = want.ContentType
		if file.Size != want.Size || file.SHA256 != want.SHA256 {
			return File{}, nil, &ChangedError{Name: want.Name, Path: want.Path, WantSize: want.Size,
				GotSize: file.Size, WantSHA256: want.SHA256, GotSHA256: file.SHA256}
		}
	}
	return file, data, nil
}
