package agentmail

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Attachments: send_message's attachment_paths name files inside the
// project (relative to its directory, or absolute under it). Each is read
// when the message is sent, checked (inside the project with symlinks
// resolved, a regular file, at most MaxAttachmentBytes) and stored with the
// message as it is: images are not converted or resized, nothing is. The
// message resource returns them (resource://message/{id}); listings show
// their metadata. The project directory must be a project's own tree (see
// projecttree.go: never /, the home folder, mailgate's home or vault, and a
// work tree owned by the user). A file is read through an os.Root of it,
// so a symlink (or a path component swapped for one) that leads outside
// the project is refused even if it changes while being read, and a file
// with several hard links is refused (it may be a file from anywhere).

// Bounds: one attachment and one message's worth stay well inside an MCP
// frame once base64-encoded (TypeScript stdio clients refuse 10 MiB).
const (
	MaxAttachmentBytes = 1 << 20
	MaxAttachments     = 4
)

// Attachment is a stored attachment. Data is set only when read for the
// message resource.
type Attachment struct {
	ID        int64
	MessageID int64
	Seq       int    // position in the message, from 1
	Path      string // as the sender named it, relative to the project directory
	MediaType string
	Size      int64
	SHA256    string // hex of the stored bytes
	Data      []byte
	Project   string // slug of the message's project, for the view's URI
}

// AttachmentView is an attachment as answers show it.
type AttachmentView struct {
	Name      string `json:"name"`
	Path      string `json:"path"`
	MediaType string `json:"media_type"`
	Bytes     int64  `json:"bytes"`
	SHA256    string `json:"sha256"`
	URI       string `json:"uri"`
}

// AttachmentURI is the resource an attachment is read at.
func AttachmentURI(project string, messageID int64, seq int) string {
	return fmt.Sprintf("resource://message/%d/attachments/%d?project=%s", messageID, seq, url.QueryEscape(project))
}

func attachmentView(a Attachment) AttachmentView {
	return AttachmentView{Name: filepath.Base(a.Path), Path: a.Path, MediaType: a.MediaType, Bytes: a.Size, SHA256: a.SHA256,
		URI: AttachmentURI(a.Project, a.MessageID, a.Seq)}
}

// attachmentViews are a message's attachments as its answers list them.
func attachmentViews(as []Attachment) []any {
	return viewsOf(as, func(a Attachment) any { return attachmentView(a) })
}

// AttachmentTx reads and writes message attachments.
type AttachmentTx interface {
	// InsertAttachments stores a message's attachments (Seq set), setting IDs.
	InsertAttachments(ctx context.Context, messageID int64, as []Attachment) error
	// AttachmentsOf returns the attachments of messages, by message id, in
	// Seq order; Data only when withData.
	AttachmentsOf(ctx context.Context, messageIDs []int64, withData bool) (map[int64][]Attachment, error)
}

// readAttachments reads and checks the files named by paths inside the
// project directory dir, which must be a project's own tree (see
// openProjectTree).
func readAttachments(dir string, paths []string, protected []ProtectedPath) ([]Attachment, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	if len(paths) > MaxAttachments {
		return nil, newError("TOO_MANY_ATTACHMENTS", ErrInvalidArgument,
			"%d attachments; the limit is %d per message: send several messages, or mention the other files by path", len(paths), MaxAttachments)
	}
	root, real, err := openProjectTree(dir, protected)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	out := make([]Attachment, 0, len(paths))
	for i, p := range paths {
		a, err := readAttachment(root, dir, real, p)
		if err != nil {
			return nil, err
		}
		a.Seq = i + 1
		out = append(out, a)
	}
	return out, nil
}

func readAttachment(root *os.Root, dir, real, p string) (Attachment, error) {
	refuse := func(format string, args ...any) (Attachment, error) {
		return Attachment{}, newError("INVALID_ATTACHMENT", ErrInvalidArgument, "attachment %q: "+format, append([]any{p}, args...)...)
	}
	clean := strings.TrimSpace(p)
	if clean == "" {
		return refuse("empty path")
	}
	outside := func() (Attachment, error) {
		return refuse("it is outside the project %s (symlinks are resolved); only files inside the project can be attached", dir)
	}
	rel, ok := filepath.Clean(clean), true
	if filepath.IsAbs(rel) {
		// Absolute: under the project directory as given or as resolved.
		var r string
		r, ok = under(dir, rel)
		if !ok {
			r, ok = under(real, rel)
		}
		if !ok {
			if resolved, err := filepath.EvalSymlinks(rel); err == nil {
				r, ok = under(real, resolved)
			}
		}
		if !ok {
			return outside()
		}
		rel = r
	}
	if !filepath.IsLocal(rel) {
		return outside()
	}
	// Resolve symlinks (absolute ones too, which os.Root never follows),
	// then open what they lead to through the root: a link out of the
	// project is refused here, and one swapped in meanwhile by os.Root.
	named := rel // the path as the sender named it, kept with the message
	resolved, err := filepath.EvalSymlinks(filepath.Join(real, rel))
	if errors.Is(err, fs.ErrNotExist) {
		return refuse("no such file in the project %s", dir)
	} else if err != nil {
		return refuse("cannot be read: %v", unwrapPathErr(err))
	}
	if rel, ok = under(real, resolved); !ok {
		return outside()
	}
	f, err := root.Open(rel)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return refuse("no such file in the project %s", dir)
		case strings.Contains(err.Error(), "escapes from parent"): // os.Root's refusal of a symlink out
			return outside()
		}
		return refuse("cannot be read: %v", unwrapPathErr(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return refuse("cannot be read: %v", unwrapPathErr(err))
	}
	if !fi.Mode().IsRegular() {
		return refuse("not a regular file")
	}
	// A hard link is a second name of a file that may live anywhere on the
	// same file system (the Gmail token, another project's secrets): os.Root
	// cannot tell, so a file with more than one name is not read.
	if n := linkCount(fi); n > 1 {
		return refuse("it has %d hard links, so it may be a file from outside the project: attach a copy of it instead", n)
	}
	if fi.Size() > MaxAttachmentBytes {
		return refuse("%d bytes; the limit is %d per attachment: mention the file by path in body_md instead", fi.Size(), MaxAttachmentBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxAttachmentBytes+1))
	if err != nil {
		return refuse("cannot be read: %v", unwrapPathErr(err))
	}
	if len(data) > MaxAttachmentBytes { // it grew while being read
		return refuse("more than %d bytes; the limit is %d per attachment", MaxAttachmentBytes, MaxAttachmentBytes)
	}
	sum := sha256.Sum256(data)
	return Attachment{Path: filepath.ToSlash(named), MediaType: mediaType(rel, data), Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), Data: data}, nil
}

// under returns p relative to base when p is inside base (lexically).
func under(base, p string) (string, bool) {
	r, err := filepath.Rel(base, p)
	return r, err == nil && filepath.IsLocal(r)
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// mediaType is the file's type by extension, else by content.
func mediaType(name string, data []byte) string {
	if t := mime.TypeByExtension(strings.ToLower(filepath.Ext(name))); t != "" {
		return t
	}
	return http.DetectContentType(data)
}

// checkAttachment verifies stored bytes against their recorded hash.
func checkAttachment(a Attachment) error {
	sum := sha256.Sum256(a.Data)
	if int64(len(a.Data)) != a.Size || hex.EncodeToString(sum[:]) != a.SHA256 {
		return fmt.Errorf("attachment %d of message %d does not match its recorded size and SHA-256: the store is damaged", a.Seq, a.MessageID)
	}
	return nil
}

// MessageAttachment returns one stored attachment of a message of the
// project, with its bytes, checked against its hash.
func (s *Service) MessageAttachment(ctx context.Context, projectKey string, messageID int64, seq int) (Attachment, error) {
	var out Attachment
	err := s.st.Read(ctx, func(tx Tx) error {
		proj, err := s.project(ctx, tx, projectKey)
		if err != nil {
			return err
		}
		if _, err := s.message(ctx, tx, proj, messageID); err != nil {
			return err
		}
		all, err := tx.AttachmentsOf(ctx, []int64{messageID}, true)
		if err != nil {
			return err
		}
		for _, a := range all[messageID] {
			if a.Seq == seq {
				out = a
				out.Project = proj.Slug
				return checkAttachment(a)
			}
		}
		return newError("NOT_FOUND", ErrNotFound, "message %d has no attachment %d", messageID, seq)
	})
	return out, err
}

// withAttachmentViews fills the attachment metadata of listed messages of
// project p.
func withAttachmentViews(ctx context.Context, tx Tx, p Project, ms []*Message) error {
	if len(ms) == 0 {
		return nil
	}
	ids := make([]int64, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	all, err := tx.AttachmentsOf(ctx, ids, false)
	if err != nil {
		return err
	}
	for _, m := range ms {
		m.Attachments = all[m.ID]
		for i := range m.Attachments {
			m.Attachments[i].Project = p.Slug
		}
	}
	return nil
}
