package approvalweb

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/warnings"
)

var funcs = template.FuncMap{
	"stamp": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format("2006-01-02 15:04")
	},
	"esc": warnings.Escape,
	"utc": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 MST") },
}

// row is one request in the list.
type row struct {
	Folder, Name, What, Subject string
	Account                     string // "" for the default account
	Created, Expires, SentAt    time.Time
	Expired, HTML               bool
	SendAt                      time.Time // scheduled
	Warnings, Attachments       int
	Problem                     string // dead, invalid, failed …
}

type listData struct {
	Vault                string
	Status               []string
	Pending, Approved    []row
	Sent                 []row
	CSRF, Flash, Problem string
}

// maxSent is how many of the latest Done/ files the page lists.
const maxSent = 10

func (s *Server) listData(ctx context.Context, csrf string) (listData, error) {
	d := listData{Vault: s.o.Vault.Root(), CSRF: csrf}
	if s.o.Status != nil {
		d.Status = s.o.Status(ctx)
	}
	items, err := s.o.Vault.List(approval.DirPending, approval.DirApproved, approval.DirDone)
	if err != nil {
		return d, err
	}
	if s.o.Check != nil {
		s.o.Check(ctx, items)
	}
	now := s.o.Now()
	for i := range items {
		it := &items[i]
		r := row{Folder: it.Folder, Name: it.Name, What: what(it), Subject: it.Subject, Created: it.Created, Expires: it.Expires,
			Expired: it.Expired(now), HTML: it.HTMLSHA256 != "", Warnings: len(it.CurrentWarnings()), Attachments: len(it.Attachments), SentAt: it.SentAt, SendAt: it.SendAt, Account: it.Account}
		switch {
		case it.Invalid != "":
			r.Problem = "not a readable request: " + it.Invalid
		case it.Dead != "":
			r.Problem = "cannot be used: " + it.Dead
		case it.Folder == approval.DirDone && it.Status == approval.StatusFailed:
			r.Problem = "failed: " + it.Error
		case it.Folder == approval.DirDone && it.Status != approval.StatusSent:
			r.Problem = "outcome unknown: check Sent before approving again"
		}
		switch it.Folder {
		case approval.DirPending:
			d.Pending = append(d.Pending, r)
		case approval.DirApproved:
			d.Approved = append(d.Approved, r)
		case approval.DirDone:
			d.Sent = append(d.Sent, r)
		}
	}
	// Newest first.
	for _, l := range [][]row{d.Pending, d.Approved, d.Sent} {
		slices.Reverse(l)
	}
	if len(d.Sent) > maxSent {
		d.Sent = d.Sent[:maxSent]
	}
	return d, nil
}

// what is a request's kind and recipients, in a few words.
func what(it *approval.Item) string {
	to := strings.Join(it.ToList, ", ")
	switch it.Kind {
	case approval.KindSend:
		return "send to " + to
	case approval.KindReply:
		if to == "" {
			return "reply in thread " + it.ThreadID
		}
		return "reply to " + to
	case approval.KindForward:
		return "forward to " + to
	case approval.KindSendDraft:
		return "send draft " + it.DraftID
	case approval.KindTrash:
		return "move to Trash"
	}
	if it.Kind.IsSettings() { // delete_label, create_filter, set_vacation, unsubscribe: the subject says what
		return it.Subject
	}
	return string(it.Kind)
}

// attachment is one attached file as the page shows it.
type attachment struct {
	Line, Name, Size, SHA256 string
	Text                     string       // a text file's start
	Image                    template.URL // a data: URL of an image
	Note                     string       // why there is no preview
}

type detailData struct {
	listData
	It                  *approval.Item
	What                string
	From                string
	To, Cc, Bcc         []string
	Warnings            []string
	Body                string // hidden characters made visible
	Raw                 string // for the correction form
	FileSHA256          string
	HTML                bool
	SrcDoc              string
	HTMLSource, HTMLErr string
	Blocked             []string
	Links               []string
	Attachments         []attachment
	Editable, BodyFixed bool
	Decidable           bool
	Expired             bool
	Original            *original // a reply's or a forward's (context.go)
	Scheduled           *schedule // an email sent later
}

// frameCSP is the email frame's own policy: nothing is loaded, nothing
// runs; inline style only (a client shows it).
const frameCSP = "default-src 'none'; style-src 'unsafe-inline'"

func (s *Server) request(w http.ResponseWriter, r *http.Request, csrf string) {
	folder, name := r.URL.Query().Get("folder"), r.URL.Query().Get("name")
	if !knownFolder(folder) || name == "" || name != filepath.Base(name) {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	d, code := s.detail(r.Context(), csrf, folder, name)
	s.render(w, code, "request", d)
}

func (s *Server) detail(ctx context.Context, csrf, folder, name string) (detailData, int) {
	d := detailData{listData: listData{Vault: s.o.Vault.Root(), CSRF: csrf}}
	if s.o.Status != nil {
		d.Status = s.o.Status(ctx)
	}
	it, err := s.o.Vault.Resolve(name, folder)
	if err != nil || it.Name != name {
		d.Problem = fmt.Sprintf("%s/%s is not there any more: it was decided or moved (look at the list).", folder, name)
		return d, http.StatusNotFound
	}
	one := []approval.Item{*it}
	if s.o.Check != nil {
		s.o.Check(ctx, one)
	}
	it = &one[0]
	d.It, d.What = it, what(it)
	if data, err := os.ReadFile(it.Path); err == nil {
		h := sha256.Sum256(data)
		d.FileSHA256 = hex.EncodeToString(h[:])
	}
	acct := "the Gmail account of the server that sends it"
	if it.Account != "" { // several Gmail accounts: the one that sends, named first
		acct = "the Gmail account “" + warnings.Escape(it.Account) + "”"
	}
	d.From = acct + " (its own address)"
	if it.From != "" {
		d.From = warnings.Escape(it.From) + " (a send-as address of " + acct + ")"
		if it.Account != "" {
			d.From = "account “" + warnings.Escape(it.Account) + "”: " + d.From
		}
	}
	for _, l := range []struct {
		dst *[]string
		src []string
	}{{&d.To, it.ToList}, {&d.Cc, it.Cc}, {&d.Bcc, it.Bcc}} {
		for _, a := range l.src {
			*l.dst = append(*l.dst, warnings.Escape(strings.TrimSpace(a)))
		}
	}
	d.Warnings = it.CurrentWarnings()
	d.Body = warnings.Escape(it.Body)
	d.Raw = it.Body
	d.Expired = it.Expired(s.o.Now())
	d.Decidable = it.Invalid == "" && (folder == approval.DirPending || folder == approval.DirApproved)
	d.Editable = folder == approval.DirPending && it.Invalid == "" && !it.Kind.IsAction()
	d.BodyFixed = mailmsg.BodyFormat(it.HTMLFrom) == mailmsg.FormatHTML
	if it.HTMLSHA256 != "" {
		d.HTML = true
		doc, src, err := s.o.Vault.HTMLPart(it)
		switch {
		case err != nil:
			d.HTMLErr = "The HTML part cannot be shown: " + err.Error() + ". Its links, as the request lists them, are below."
			d.Links = it.HTMLLinks
		default:
			d.HTMLSource = string(src)
			d.Blocked = remoteResources(doc)
			for _, l := range mailmsg.HTMLLinks(doc) {
				d.Links = append(d.Links, l.String())
			}
			d.SrcDoc = `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="` + frameCSP + `">` + doc
		}
	}
	for _, line := range it.Attachments {
		d.Attachments = append(d.Attachments, s.preview(line))
	}
	d.Original, d.Scheduled = s.original(it), scheduleOf(it.SendAt, s.o.Now()) // context.go
	return d, http.StatusOK
}

var attachmentLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*) \((.*), sha256 ([0-9a-f]{64})\)$`) })

// maxPreview bounds what an attachment preview reads.
const maxPreview = 4 << 20

// preview finds an attachment in the attachment folder by its name, and
// shows it only when its SHA-256 is the one the request binds: text (its
// start) and images (PNG, JPEG, GIF, WebP, as data: URLs; never SVG).
func (s *Server) preview(line string) attachment {
	a := attachment{Line: warnings.Escape(line)}
	m := attachmentLine().FindStringSubmatch(line)
	if m == nil {
		a.Note = "no preview: the line is not mailgate's"
		return a
	}
	a.Name, a.Size, a.SHA256 = warnings.Escape(m[1]), m[2], m[3]
	if s.o.Attachments == "" {
		a.Note = "no preview: no attachment folder"
		return a
	}
	root, err := os.OpenRoot(s.o.Attachments)
	if err != nil {
		a.Note = "no preview: the attachment folder cannot be opened"
		return a
	}
	defer root.Close()
	f, err := root.Open(m[1])
	if err != nil {
		a.Note = "no preview: not in the attachment folder (a forward's attachment, or moved)"
		return a
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxPreview {
		a.Note = "no preview: not a regular file, or too large to preview"
		return a
	}
	data := make([]byte, fi.Size())
	if _, err := f.Read(data); err != nil && fi.Size() > 0 {
		a.Note = "no preview: unreadable"
		return a
	}
	h := sha256.Sum256(data)
	if hex.EncodeToString(h[:]) != m[3] {
		a.Note = "no preview: the file in the attachment folder changed since the request (the gate will refuse it)"
		return a
	}
	switch ct := http.DetectContentType(data); {
	case strings.HasPrefix(ct, "image/png"), strings.HasPrefix(ct, "image/jpeg"), strings.HasPrefix(ct, "image/gif"), strings.HasPrefix(ct, "image/webp"):
		a.Image = template.URL("data:" + ct + ";base64," + base64.StdEncoding.EncodeToString(data))
	case utf8.Valid(data) && (strings.HasPrefix(ct, "text/plain") || strings.HasPrefix(ct, "text/")):
		text := string(data)
		if r := []rune(text); len(r) > 2000 {
			text = string(r[:2000]) + "\n…"
		}
		a.Text = warnings.Escape(text)
	default:
		a.Note = "no preview for " + ct
	}
	return a
}

// resultData is the answer to a decision.
type resultData struct {
	listData
	OK          bool
	Title, Text string
	Folder      string
	Name        string
}

// maxReason bounds a rejection's reason.
const maxReason = 500

// post decides a request: approve (with the corrections the form carries)
// or reject (with the reason). The form carries the session's CSRF token,
// the folder and name shown and the file's hash as shown.
func (s *Server) post(approve bool) func(http.ResponseWriter, *http.Request, string) {
	return func(w http.ResponseWriter, r *http.Request, csrf string) {
		if !s.sameOrigin(r) {
			http.Error(w, "refused: not from this page (Origin)", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 2<<20)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(csrf)) != 1 {
			http.Error(w, "refused: stale or missing form token; reload the page", http.StatusForbidden)
			return
		}
		folder, name := r.PostFormValue("folder"), r.PostFormValue("name")
		if !knownFolder(folder) || name == "" || name != filepath.Base(name) {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		d := approval.Decision{Via: approval.ViaPage, From: folder, FileSHA256: r.PostFormValue("sha256")}
		verb, dest := "approve", approval.DirApproved
		var it *approval.Item
		var err error
		if approve {
			cur, rerr := s.o.Vault.Resolve(name, folder)
			if rerr == nil {
				if _, ok := r.PostForm["subject"]; ok && r.PostFormValue("subject") != cur.Subject {
					v := r.PostFormValue("subject")
					d.Subject = &v
				}
				if _, ok := r.PostForm["body"]; ok {
					if v := lf(r.PostFormValue("body")); v != lf(cur.Body) {
						d.Body = &v
					}
				}
			}
			it, err = s.o.Vault.ApproveAs(name, d)
		} else {
			verb, dest = "reject", approval.DirRejected
			d.Reason = oneLine(r.PostFormValue("reason"))
			if utf8.RuneCountInString(d.Reason) > maxReason {
				d.Reason = string([]rune(d.Reason)[:maxReason])
			}
			it, err = s.o.Vault.RejectAs(name, d)
		}
		res := resultData{listData: listData{Vault: s.o.Vault.Root(), CSRF: csrf}, Folder: folder, Name: name}
		code := http.StatusOK
		entry := audit.Entry{Time: s.o.Now(), CorrelationID: audit.NewCorrelationID(), Tool: "approvals --web", ActionType: verb,
			ApprovalFile: folder + "/" + name, ApprovalSHA256: d.FileSHA256, PID: os.Getpid()}
		switch {
		case err == nil:
			res.OK = true
			entry.Result, entry.Target = audit.ResultSuccess, audit.MaskAddress(strings.Join(it.ToList, ", "))
			var edited []string
			if d.Subject != nil {
				edited = append(edited, "subject")
			}
			if d.Body != nil {
				edited = append(edited, "body")
			}
			if approve {
				res.Title = "Approved"
				res.Text = fmt.Sprintf("%s/%s is now %s/%s. The agent's next identical call sends it, once.", folder, name, dest, it.Moved)
				if len(edited) > 0 {
					res.Text += " Your correction (" + strings.Join(edited, ", ") + ") is what is sent."
				}
				entry.Detail = "approved on " + approval.ViaPage
				if len(edited) > 0 {
					entry.Detail += ", corrected: " + strings.Join(edited, ", ")
				}
			} else {
				res.Title = "Rejected"
				res.Text = fmt.Sprintf("%s/%s is now %s/%s. The agent's next identical call is told the approver rejected it", folder, name, dest, it.Moved)
				if d.Reason != "" {
					res.Text += ", with your reason"
				}
				res.Text += "."
				entry.Detail = "rejected on " + approval.ViaPage
			}
			res.Folder, res.Name = dest, it.Moved
		default:
			var de *approval.DecidedError
			if errors.As(err, &de) {
				code = http.StatusConflict
				res.Title = "Not done: someone decided first"
			} else {
				code = http.StatusUnprocessableEntity
				res.Title = "Not done"
			}
			res.Text = err.Error()
			entry.Result, entry.Detail = audit.ResultRejected, verb+" on the approval page refused: "+err.Error()
		}
		if s.o.Audit != nil {
			if aerr := s.o.Audit.Record(entry); aerr != nil {
				s.o.Logger.Warn("approval page: writing the audit line", "err", aerr)
			}
		}
		if s.o.Status != nil && res.OK && approve {
			res.Status = s.o.Status(r.Context())
		}
		s.render(w, code, "result", res)
	}
}

func lf(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
