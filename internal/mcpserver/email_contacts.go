package mcpserver

import (
	"context"
	"fmt"
	"math"
	"net/mail"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/fence"
	"github.com/mailgate/mailgate/internal/warnings"
)

// find_contact (issue 27): the addresses the user has written to or
// received from, from the headers mailgate can already read (From of mail
// received, To, Cc and Bcc of mail sent; gmail.readonly, no contacts scope), ranked by
// how recent and how often. It helps an agent pick the right address, and
// warns when a candidate looks like one of the user's frequent contacts
// without being it (warnings.Resembles: confusable letters, a domain one
// edit away), the usual shape of a phishing look-alike.

type emailFindContactIn struct {
	accountArg
	Query      string `json:"query,omitempty" jsonschema:"Part of a name or address to look for (case-insensitive); omit to list the top contacts"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"How many contacts to answer (1-50, default 10)"`
}

// Bounds of the scan: the newest messages of each side, read as metadata
// (From, To, Cc, Bcc, Date) only.
const (
	contactScanPages = 4  // pages of contactScanSize per side
	contactScanSize  = 50 // Gmail's page for metadata reads
	contactHalfLife  = 30 * 24 * time.Hour
	contactFrequent  = 20 // the frequent contacts look-alikes are checked against
)

// contact is one address as seen in the scanned headers.
type contact struct {
	addr, name     string
	wrote, recv    int
	last           time.Time
	score          float64
	resembles, why string
}

func (h *emailHandlers) findContact(ctx context.Context, _ *mcp.CallToolRequest, in emailFindContactIn) (*mcp.CallToolResult, any, error) {
	return h.reading(ctx, "find_contact", "", func(ctx context.Context, h *emailCall) *mcp.CallToolResult {
		max := in.MaxResults
		if max == 0 {
			max = 10
		}
		if max < 1 || max > 50 {
			return errorResult("Error: max_results must be between 1 and 50")
		}
		q := strings.ToLower(strings.TrimSpace(in.Query))
		if strings.ContainsAny(q, "\r\n") || len(q) > 200 {
			return errorResult("Error: query must be one line of at most 200 characters")
		}
		own, _ := h.gm.OwnAddresses(ctx)
		all, err := h.scanContacts(ctx, own, time.Now())
		if err != nil {
			return errorResult("Error reading the mailbox's headers: " + userError(err))
		}
		return textResult(renderContacts(all, q, max))
	})
}

// scanContacts reads the newest sent and received headers and ranks every
// address in them (own addresses left out).
func (h *emailCall) scanContacts(ctx context.Context, own []string, now time.Time) ([]*contact, error) {
	by := map[string]*contact{}
	mine := map[string]bool{}
	for _, a := range own {
		mine[strings.ToLower(a)] = true
	}
	see := func(header string, sent bool, at time.Time) {
		list, err := mail.ParseAddressList(header)
		if err != nil {
			if a, err1 := mail.ParseAddress(header); err1 == nil {
				list = []*mail.Address{a}
			}
		}
		for _, a := range list {
			key := strings.ToLower(a.Address)
			if key == "" || mine[key] {
				continue
			}
			c := by[key]
			if c == nil {
				c = &contact{addr: a.Address}
				by[key] = c
			}
			if c.name == "" || at.After(c.last) && a.Name != "" {
				c.name = a.Name
			}
			w := 1.0
			if sent {
				c.wrote++
				w = 2 // the user chose to write to them
			} else {
				c.recv++
			}
			age := max(now.Sub(at), 0)
			c.score += w * math.Pow(0.5, float64(age)/float64(contactHalfLife))
			if at.After(c.last) {
				c.last = at
			}
		}
	}
	for _, side := range []struct {
		query string
		sent  bool
	}{{"in:sent", true}, {"-in:sent -in:chats -in:spam -in:trash", false}} {
		token := ""
		for range contactScanPages {
			page, err := h.gm.SearchPage(ctx, side.query, contactScanSize, token)
			if err != nil {
				return nil, err
			}
			for _, m := range page.Results {
				at := m.Time
				if at.IsZero() {
					at, _ = mail.ParseDate(m.Date)
				}
				if side.sent {
					see(m.To, true, at)
					see(m.Cc, true, at)  // a copy is written to as well
					see(m.Bcc, true, at) // and a blind one: the sender's copy keeps it
				} else {
					see(m.From, false, at)
				}
			}
			if token = page.NextPageToken; token == "" {
				break
			}
		}
	}
	out := make([]*contact, 0, len(by))
	for _, c := range by {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].addr < out[j].addr
	})
	// The frequent contacts: the top of the ranking among those the user
	// wrote to (an address that only ever wrote in is no reference).
	var frequent []string
	for _, c := range out {
		if c.wrote > 0 && len(frequent) < contactFrequent {
			frequent = append(frequent, c.addr)
		}
	}
	for _, c := range out {
		if like, ok := warnings.Resembles(c.addr, frequent); ok {
			c.resembles = like
		}
	}
	return out, nil
}

// renderContacts answers the contacts matching q (all when ""), best
// first. Names and addresses are what senders wrote: fenced.
func renderContacts(all []*contact, q string, max int) string {
	var hits []*contact
	for _, c := range all {
		if q == "" || strings.Contains(strings.ToLower(c.addr), q) || strings.Contains(strings.ToLower(c.name), q) {
			hits = append(hits, c)
		}
	}
	var b strings.Builder
	if len(hits) == 0 {
		if q == "" {
			return "No contacts found in the newest sent and received mail."
		}
		return fmt.Sprintf("No contact matching %q in the newest sent and received mail.", q)
	}
	more := ""
	if len(hits) > max {
		more = fmt.Sprintf(" (the best %d of %d)", max, len(hits))
		hits = hits[:max]
	}
	what := "Contacts"
	if q != "" {
		what = fmt.Sprintf("Contacts matching %q", q)
	}
	fmt.Fprintf(&b, "%s%s, ranked by how recently and how often the user wrote to them (counted double) or heard from them, from the headers of the newest %d sent and %d received messages:\n",
		what, more, contactScanPages*contactScanSize, contactScanPages*contactScanSize)
	var entries strings.Builder
	warned := 0
	for i, c := range hits {
		name := ""
		if c.name != "" {
			name = oneLine(c.name) + " "
		}
		fmt.Fprintf(&entries, "\n%d. %s<%s> | written to %d, received from %d | last %s\n", i+1, name, oneLine(c.addr), c.wrote, c.recv, c.last.UTC().Format("2006-01-02"))
		if c.resembles != "" {
			warned++
			fmt.Fprintf(&entries, "   WARNING: %s\n", warnings.ResemblesWarning(c.addr, []string{c.resembles})[0].Text)
		}
	}
	b.WriteString(fence.Text(searchFenceWhat, entries.String()))
	if warned > 0 {
		fmt.Fprintf(&b, "%d of these look like a frequent contact without being it (marked WARNING): do not use one unless the user confirms it.\n", warned)
	}
	return b.String()
}
