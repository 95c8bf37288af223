package mcpserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool-level benchmarks of issue 17 through the real MCP protocol, with
// 100 ms added to every Gmail request (localgmail SetLatency), as
// BENCHMARKS.md reports them.

// benchCall calls a tool and fails the benchmark on any error.
func benchCall(b *testing.B, cs *mcp.ClientSession, name string, args map[string]any) string {
	b.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		b.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		b.Fatalf("%s: %s", name, text)
	}
	return text
}

// BenchmarkModifyLabels1000With100msLatency: one modify_labels call on
// 1,000 messages: one messages.batchModify (Gmail's chunk is 1000), so
// about one 100 ms round trip plus the call's own work.
func BenchmarkModifyLabels1000With100msLatency(b *testing.B) {
	e := newSandboxEnv(b, false)
	e.deps.OrganizeLimiter = nil // the limit is not what is measured
	ids := make([]any, 1000)
	for i := range ids {
		m, err := e.gm.Insert([]byte(fmt.Sprintf("From: n@example.com\r\nTo: me@sandbox.local\r\nSubject: bulk %d\r\nMessage-ID: <bulk%d@x>\r\n\r\nbulk\r\n", i, i)), "INBOX", "UNREAD")
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = m.Id
	}
	e.gm.SetLatency(100 * time.Millisecond)
	actions := [][]any{{"archive", "read"}, {"unarchive", "unread"}}
	e.gm.ResetCounters()
	b.ResetTimer()
	for i := range b.N {
		benchCall(b, e.cs, "modify_labels", map[string]any{"message_ids": ids, "actions": actions[i%2]})
	}
	b.StopTimer()
	b.ReportMetric(float64(e.gm.Calls("messages.batchModify"))/float64(b.N), "batchModify/op")
}

// BenchmarkSearchPaging500With100msLatency pages search_email through 500
// results, 50 a page: 10 calls of one messages.list and 50 metadata gets
// each (8 in flight, paced at 40/s after a burst of 50: the client's quota
// guard, which dominates).
func BenchmarkSearchPaging500With100msLatency(b *testing.B) {
	e := newSandboxEnv(b, true)
	for i := range 500 {
		if _, err := e.gm.Insert([]byte(fmt.Sprintf("From: ci@example.com\r\nTo: me@sandbox.local\r\nSubject: pagebench %d\r\nMessage-ID: <pb%d@x>\r\n\r\nx\r\n", i, i)), "INBOX"); err != nil {
			b.Fatal(err)
		}
	}
	e.gm.SetConcurrencyCap(8)
	e.gm.SetLatency(100 * time.Millisecond)
	b.ResetTimer()
	for range b.N {
		token, pages, seen := "", 0, 0
		for {
			args := map[string]any{"query": "subject:pagebench", "max_results": 50}
			if token != "" {
				args["page_token"] = token
			}
			text := benchCall(b, e.cs, "search_email", args)
			pages++
			seen += len(messageIDRe.FindAllString(text, -1))
			sub := nextTokenRe.FindStringSubmatch(text)
			if sub == nil {
				break
			}
			token = sub[1]
		}
		if pages != 10 || seen != 500 {
			b.Fatalf("%d pages, %d messages", pages, seen)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/10, "ms/page")
}
