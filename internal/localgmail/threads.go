package localgmail

import (
	"google.golang.org/api/gmail/v1"
)

// The Gmail methods this file serves, with their quota units (methods.go).
func init() {
	handle("threads.list", 10, (*Server).listThreads)
}

// listThreads is users.threads.list (developers.google.com/workspace/gmail/
// api/reference/rest/v1/users.threads/list): the threads holding at least
// one message that matches q and labelIds, newest activity first, each as
// its id, snippet and historyId only ("Each thread resource contains only
// an id, snippet and historyId" is what Gmail answers without a further
// threads.get); resultSizeEstimate always, nextPageToken until the last
// page. A thread is placed by its newest matching message, and its snippet
// is that message's, as Gmail shows a thread in a search.
func (s *Server) listThreads(c *call) (any, error) {
	if c.meta && c.query("q") != "" {
		return nil, apiErr(403, "forbidden", "Metadata scope does not support 'q' parameter")
	}
	pg, err := c.pager()
	if err != nil {
		return nil, err
	}
	query := parseQuery(c.query("q"), s.now())
	s.mu.RLock()
	defer s.mu.RUnlock()
	matches := s.searchLocked(query, c.r.URL.Query()["labelIds"], pg.incl)
	// One entry per thread, its newest match (matches are newest first),
	// so the cursor of pager.page works on threads as it does on messages.
	seen := map[string]bool{}
	var heads []*storedMsg
	for _, m := range matches {
		if !seen[m.threadID] {
			seen[m.threadID] = true
			heads = append(heads, m)
		}
	}
	page, next := pg.page(heads)
	resp := &gmail.ListThreadsResponse{ResultSizeEstimate: int64(len(heads)), NextPageToken: next, ForceSendFields: []string{"ResultSizeEstimate"}}
	for _, m := range page {
		var hist uint64
		for _, t := range s.st.threads[m.threadID] {
			hist = max(hist, t.historyID)
		}
		resp.Threads = append(resp.Threads, &gmail.Thread{Id: m.threadID, Snippet: m.p.get().snippet, HistoryId: hist})
	}
	return resp, nil
}
