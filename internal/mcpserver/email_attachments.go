package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/attach"
	"github.com/mailgate/mailgate/internal/fence"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mailmsg"
)

// Received attachments: read_email lists each one (id, name, type, size);
// get_attachment shows a small text one inline and saves any one into the
// download folder under the mailgate home (attach.Downloads): never a path
// the caller chose, under a sanitized name, never overwriting, size capped.

type emailAttachmentIn struct {
	accountArg
	MessageID    string `json:"message_id" jsonschema:"Gmail message ID (from search_email or read_email)"`
	AttachmentID string `json:"attachment_id" jsonschema:"The attachment's id, as read_email lists it"`
	Save         bool   `json:"save,omitempty" jsonschema:"Save the file even when it is small text shown inline (default false: small text is shown, anything else saved)"`
}

// attachmentRef is the id read_email shows for a and get_attachment takes:
// "part:" and the part's MIME part id. Gmail's own attachmentId cannot be
// the handle: Gmail gives a part a new one on every read of the message
// (all of them stay usable), so an id an agent copied from one read is not
// in the next, and a small part has none at all (its bytes come inline).
// The part id is the same on every read.
func attachmentRef(a gmail.Attachment) string {
	return partRefPrefix + a.PartID
}

const partRefPrefix = "part:"

// writeAttachmentLines adds one line per attachment to a message's fenced
// block (its name and type are the sender's words). A message without
// attachments gets none, so its answer reads as it did before.
func writeAttachmentLines(b *strings.Builder, files []gmail.Attachment) {
	for i, a := range files {
		name := oneLine(a.Filename)
		if name == "" {
			name = "(unnamed)"
		}
		fmt.Fprintf(b, "Attachment %d: %s | %s | %s | attachment_id: %s\n", i+1, name, oneLine(a.MimeType),
			mailmsg.FormatSize(a.Size), oneLine(attachmentRef(a)))
	}
}

func (h *emailHandlers) getAttachment(ctx context.Context, _ *mcp.CallToolRequest, in emailAttachmentIn) (*mcp.CallToolResult, any, error) {
	return h.reading(ctx, "get_attachment", "message:"+oneLine(in.MessageID), func(ctx context.Context, h *emailCall) *mcp.CallToolResult {
		return h.doGetAttachment(ctx, in)
	})
}

func (h *emailCall) doGetAttachment(ctx context.Context, in emailAttachmentIn) *mcp.CallToolResult {
	msgID, ref := strings.TrimSpace(in.MessageID), strings.TrimSpace(in.AttachmentID)
	if msgID == "" || ref == "" {
		return errorResult("Error: give message_id and attachment_id (read_email lists each attachment's id)")
	}
	// The message says what the attachment is (name, type, size): the id
	// alone says nothing a file could be named after, and a size over the
	// cap is refused before the bytes are fetched.
	m, err := h.gm.Message(ctx, msgID)
	if err != nil {
		return errorResult(readFailure(err, "Message", msgID, "reading email"))
	}
	var file *gmail.Attachment
	var data []byte
	if partID, ok := strings.CutPrefix(ref, partRefPrefix); ok {
		// The part by its stable id, its bytes by the attachmentId of this
		// same read (or inline, for a small part).
		for i := range m.Files {
			if m.Files[i].PartID == partID {
				file = &m.Files[i]
				break
			}
		}
	} else if gmailAttachmentID(ref) {
		// A Gmail attachmentId the agent got elsewhere: fetched as given
		// (Gmail keeps every id it gave usable), its name and type taken from
		// this read by size, since this read's ids are all new.
		if data, err = h.gm.GetAttachment(ctx, msgID, ref); err != nil {
			if errors.Is(err, gmail.ErrNotFound) {
				return errorResult(fmt.Sprintf("Error: message %s has no attachment with id %s (read_email lists its attachments)", msgID, oneLine(ref)))
			}
			return errorResult("Error fetching attachment: " + userError(err))
		}
		file = bySize(m.Files, int64(len(data)))
	}
	if file == nil {
		return errorResult(fmt.Sprintf("Error: message %s has no attachment with id %s (read_email lists its attachments)", msgID, oneLine(ref)))
	}
	name := file.Filename
	if strings.TrimSpace(name) == "" {
		name = "attachment"
	}
	dl := h.d.Downloads
	limit := dl.MaxBytes
	if limit <= 0 {
		limit = attach.DefaultMaxDownloadBytes
	}
	if file.Size > limit {
		return errorResult(tooLargeText(&attach.DownloadTooLargeError{Name: mailmsg.SanitizeFilename(name), Size: file.Size, Limit: limit}))
	}
	if data == nil {
		data = file.Data
	}
	if data == nil && file.ID != "" {
		if data, err = h.gm.GetAttachment(ctx, msgID, file.ID); err != nil {
			if errors.Is(err, gmail.ErrNotFound) {
				return errorResult(fmt.Sprintf("Error: the attachment %s of message %s is no longer accessible.", oneLine(ref), msgID))
			}
			return errorResult("Error fetching attachment: " + userError(err))
		}
	}
	// The name and type are the sender's words: shown only inside a fence
	// (the saved path holds the name made safe by SanitizeFilename).
	size := mailmsg.FormatSize(int64(len(data)))
	if !in.Save {
		if text, ok := attach.InlineText(name, file.MimeType, data, 0); ok {
			body := fmt.Sprintf("Name: %s\nType: %s\n\n%s\n", oneLine(name), oneLine(file.MimeType), strings.TrimRight(text, "\n"))
			return textResult(fmt.Sprintf("Attachment of message %s (%s), shown as text (call again with save: true to save it):\n", msgID, size) +
				fence.Text(readFenceWhat, body))
		}
	}
	if !filepath.IsAbs(dl.Dir) {
		// Never a folder relative to wherever the server was started.
		return errorResult("Error: no downloads folder is configured (MAILGATE_HOME), so attachments cannot be saved")
	}
	path, err := dl.Save(name, data)
	var tooLarge *attach.DownloadTooLargeError
	if errors.As(err, &tooLarge) {
		return errorResult(tooLargeText(tooLarge))
	}
	if err != nil {
		// The error may quote the path, which holds the sender's name.
		return errorResult("Error saving attachment:\n" + fence.Text(readFenceWhat, err.Error()))
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	// The file's name is the sender's (made safe by SanitizeFilename, but
	// still their words): the path is fenced like a body.
	return textResult(fmt.Sprintf("Attachment of message %s (%s) saved; its path, which holds the sender's file name:\n", msgID, size) +
		fence.Text(savedFenceWhat, path))
}

// savedFenceWhat names the fence around a saved attachment's path.
const savedFenceWhat = "ATTACHMENT PATH"

// tooLargeText refuses a download over the cap; the file name in the
// error is the sender's, so it is fenced.
func tooLargeText(e *attach.DownloadTooLargeError) string {
	name := e.Name
	e.Name = "(named below)"
	return "Error: " + e.Error() + "\n" + fence.Text(readFenceWhat, "Name: "+name)
}

// bySize describes the attachment fetched by a Gmail attachmentId: the one
// file of files with an id and that size; when several have it, a file
// named "attachment" of unknown type (never one of them guessed).
func bySize(files []gmail.Attachment, size int64) *gmail.Attachment {
	var found *gmail.Attachment
	for i := range files {
		if files[i].ID == "" || files[i].Size != size {
			continue
		}
		if found != nil {
			return &gmail.Attachment{MimeType: "application/octet-stream", Size: size}
		}
		found = &files[i]
	}
	if found == nil {
		return &gmail.Attachment{MimeType: "application/octet-stream", Size: size}
	}
	return found
}

// gmailAttachmentID reports whether s can be a Gmail attachmentId (long,
// base64url characters only): anything else is refused without asking Gmail.
func gmailAttachmentID(s string) bool {
	if len(s) < 16 || len(s) > 4096 {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
