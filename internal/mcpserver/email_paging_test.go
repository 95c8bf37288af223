package mcpserver

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/sandbox"
)

var (
	nextTokenRe = regexp.MustCompile(`page_token "([^"]+)" for the next page\.$`)
	messageIDRe = regexp.MustCompile(`Message ID: (\S+) \|`)
)

// TestSearchPagingEveryMessageOnce: paging the sandbox's 120 Builds messages
// through search_email, 50 at a time, returns every one exactly once, and
// the last page has no next-page line.
func TestSearchPagingEveryMessageOnce(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, true)
	seen := map[string]int{}
	token, pages := "", 0
	for {
		text := callPage(t, e.cs, "search_email", map[string]any{"query": sandbox.BuildsQuery, "max_results": 50}, token, pages+1)
		pages++
		for _, m := range messageIDRe.FindAllStringSubmatch(text, -1) {
			seen[m[1]]++
		}
		sub := nextTokenRe.FindStringSubmatch(text)
		if sub == nil {
			if strings.Contains(text, "page_token") {
				t.Fatalf("last page mentions a page token: %q", text[max(0, len(text)-200):])
			}
			break
		}
		// The paging line is a line of its own: a real newline before it, not
		// the two characters backslash and n.
		if !strings.Contains(text, "\nMore results: ") || strings.Contains(text, `\nMore`) {
			t.Fatalf("page %d: the paging line does not start a line: %q", pages, text[max(0, len(text)-200):])
		}
		if token, _ = strconv.Unquote(`"` + sub[1] + `"`); token == "" || pages > 10 {
			t.Fatalf("bad token after page %d: %q", pages, sub[1])
		}
	}
	if pages != 3 || len(seen) != sandbox.Builds {
		t.Fatalf("%d pages, %d distinct messages; want 3 and %d", pages, len(seen), sandbox.Builds)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("message %s returned %d times", id, n)
		}
	}
}

// callPage calls a paged tool (search_email, read_thread) for page number
// page: args and, after the first page, the token the previous one gave.
// An error answer ends the test.
func callPage(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, token string, page int) string {
	t.Helper()
	if token != "" {
		args["page_token"] = token
	}
	text, isErr := callTool(t, cs, tool, args)
	if isErr {
		t.Fatalf("%s page %d: %s", tool, page, text)
	}
	return text
}

// TestSearchPageToken: a single page answers as before (no token line); a
// token that is not one is refused before Gmail, and one Gmail refuses is
// explained.
func TestSearchPageToken(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, true)
	text, _ := callTool(t, e.cs, "search_email", map[string]any{"query": sandbox.BuildsQuery, "max_results": 50})
	if !strings.HasSuffix(text, "for the next page.") {
		t.Fatalf("first of three pages has no next-page line: %q", text[len(text)-200:])
	}
	before := e.gm.TotalCalls()
	for _, tok := range []string{"a b", strings.Repeat("x", 600), "tok\r\n"} {
		if text, isErr := callTool(t, e.cs, "search_email", map[string]any{"query": "x", "page_token": tok}); !isErr || !strings.HasPrefix(text, "Error: page_token") {
			t.Errorf("page_token %q: (%v) %q", tok, isErr, text)
		}
	}
	if e.gm.TotalCalls() != before {
		t.Fatal("a malformed page token reached Gmail")
	}
	text, isErr := callTool(t, e.cs, "search_email", map[string]any{"query": sandbox.BuildsQuery, "page_token": "notatoken"})
	if !isErr || !strings.Contains(text, "invalid page token") {
		t.Fatalf("foreign token: (%v) %q", isErr, text)
	}
}
