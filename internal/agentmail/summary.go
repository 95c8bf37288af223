package agentmail

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Thread summaries are heuristic and need no language model: agents write
// Markdown with bullets, checkboxes and TODO/ACTION/NEXT/FIXME/BLOCKED
// markers, and those carry most of what a summary should say. The reference
// can refine them with an LLM (llm_mode); mailgate accepts that flag and
// always answers from the text, so the same thread always gets the same
// summary.

// Mention counts @name mentions.
type Mention struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// ThreadSummary is the digest of one thread.
type ThreadSummary struct {
	Participants   []string  `json:"participants"`
	KeyPoints      []string  `json:"key_points"`
	ActionItems    []string  `json:"action_items"`
	TotalMessages  int       `json:"total_messages"`
	OpenActions    int       `json:"open_actions"`
	DoneActions    int       `json:"done_actions"`
	Mentions       []Mention `json:"mentions"`
	CodeReferences []string  `json:"code_references,omitempty"`
}

// Example is a message shown as an example of a thread.
type Example struct {
	ID        int64   `json:"id"`
	Subject   string  `json:"subject"`
	From      string  `json:"from"`
	CreatedTS *string `json:"created_ts"`
}

// ThreadSummaryResult is summarize_thread's answer for one thread.
type ThreadSummaryResult struct {
	ThreadID string        `json:"thread_id"`
	Summary  ThreadSummary `json:"summary"`
	Examples []Example     `json:"examples,omitempty"`
}

// DigestEntry is one thread of a multi-thread digest.
type DigestEntry struct {
	ThreadID string        `json:"thread_id"`
	Summary  ThreadSummary `json:"summary"`
}

// DigestAggregate merges the threads of a digest.
type DigestAggregate struct {
	TopMentions []string `json:"top_mentions"`
	ActionItems []string `json:"action_items"`
	KeyPoints   []string `json:"key_points"`
}

// ThreadDigest is summarize_thread's answer for a comma-separated list of
// threads (or an empty thread id).
type ThreadDigest struct {
	Threads   []DigestEntry   `json:"threads"`
	Aggregate DigestAggregate `json:"aggregate"`
}

const (
	maxSummaryItems  = 10
	maxExamples      = 3
	summaryThreadCap = 500
)

var (
	checkboxRE = lazyRegexp(`^(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s*(.*)$`)
	bulletRE   = lazyRegexp(`^(?:[-*+]|\d+[.)])\s+(.*)$`)
	headingRE  = lazyRegexp(`^#{1,6}\s+(.*)$`)
	actionRE   = lazyRegexp(`\b(TODO|ACTION|FIXME|NEXT|BLOCKED)\b\s*[:\-]?`)
	mentionRE  = lazyRegexp(`(?:^|[^\w@/.])@([A-Za-z][\w.-]*[\w])`)
	codeRE     = lazyRegexp("`([^`\n]+)`")
)

// Summarize digests messages (oldest first).
func Summarize(ms []Message) ThreadSummary {
	sum := ThreadSummary{Participants: []string{}, KeyPoints: []string{}, ActionItems: []string{}, Mentions: []Mention{}, TotalMessages: len(ms)}
	who := map[string]bool{}
	mentions := map[string]int{}
	code := map[string]bool{}
	seenPoint, seenAction := map[string]bool{}, map[string]bool{}
	addPoint := func(s string) {
		if s != "" && !seenPoint[s] && len(sum.KeyPoints) < maxSummaryItems {
			seenPoint[s] = true
			sum.KeyPoints = append(sum.KeyPoints, s)
		}
	}
	addAction := func(s string) {
		if s != "" && !seenAction[s] && len(sum.ActionItems) < maxSummaryItems {
			seenAction[s] = true
			sum.ActionItems = append(sum.ActionItems, s)
		}
	}
	for _, m := range ms {
		if !who[m.SenderName] {
			who[m.SenderName] = true
			sum.Participants = append(sum.Participants, m.SenderName)
		}
		fenced := false
		for _, line := range strings.Split(m.BodyMD, "\n") {
			t := strings.TrimSpace(line)
			if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
				fenced = !fenced
				continue
			}
			if fenced || t == "" {
				continue
			}
			for _, mm := range mentionRE().FindAllStringSubmatch(t, -1) {
				mentions[mm[1]]++
			}
			for _, cm := range codeRE().FindAllStringSubmatch(t, -1) {
				if strings.ContainsAny(cm[1], "/.(:_") && !strings.Contains(cm[1], " ") {
					code[cm[1]] = true
				}
			}
			if cb := checkboxRE().FindStringSubmatch(t); cb != nil {
				if cb[1] == " " {
					sum.OpenActions++
				} else {
					sum.DoneActions++
				}
				addAction(strings.TrimSpace(cb[2]))
				continue
			}
			text := t
			bullet := false
			if b := bulletRE().FindStringSubmatch(t); b != nil {
				text, bullet = strings.TrimSpace(b[1]), true
			} else if h := headingRE().FindStringSubmatch(t); h != nil {
				text, bullet = strings.TrimSpace(h[1]), true
			}
			if loc := actionRE().FindStringIndex(text); loc != nil && (loc[0] == 0 || bullet) {
				sum.OpenActions++
				addAction(text)
				continue
			}
			if bullet {
				addPoint(text)
			}
		}
	}
	sort.Strings(sum.Participants)
	for name, n := range mentions {
		sum.Mentions = append(sum.Mentions, Mention{name, n})
	}
	sort.Slice(sum.Mentions, func(i, j int) bool {
		a, b := sum.Mentions[i], sum.Mentions[j]
		return a.Count > b.Count || a.Count == b.Count && a.Name < b.Name
	})
	if len(sum.Mentions) > maxSummaryItems {
		sum.Mentions = sum.Mentions[:maxSummaryItems]
	}
	sum.CodeReferences = slices.Sorted(maps.Keys(code))
	if len(sum.CodeReferences) > maxSummaryItems {
		sum.CodeReferences = sum.CodeReferences[:maxSummaryItems]
	}
	return sum
}

// SummarizeThread digests one thread, or several given as "T-1,T-2" (an
// empty id gives an empty digest, as in the reference).
func (s *Service) SummarizeThread(ctx context.Context, projectKey, threadID string, includeExamples bool) (any, error) {
	return s.summarizeThreads(ctx, threadID, includeExamples, func(tx Tx) ([]int64, error) {
		proj, err := s.project(ctx, tx, projectKey)
		return []int64{proj.ID}, err
	})
}

// summarizeThreads summarizes threads of the projects projects resolves
// (one, or a product's): a thread id names the messages of that thread in
// each of them, oldest first.
func (s *Service) summarizeThreads(ctx context.Context, threadID string, includeExamples bool, projects func(Tx) ([]int64, error)) (any, error) {
	var single ThreadSummaryResult
	digest := ThreadDigest{Threads: []DigestEntry{}, Aggregate: DigestAggregate{TopMentions: []string{}, ActionItems: []string{}, KeyPoints: []string{}}}
	ids := splitThreads(threadID)
	multi := len(ids) != 1 || strings.Contains(threadID, ",")
	err := s.st.Read(ctx, func(tx Tx) error {
		projIDs, err := projects(tx)
		if err != nil {
			return err
		}
		counts := map[string]int{}
		for _, id := range ids {
			var ms []Message
			for _, pid := range projIDs {
				pm, err := tx.Thread(ctx, pid, id, summaryThreadCap, true)
				if err != nil {
					return err
				}
				ms = append(ms, pm...)
			}
			if len(projIDs) > 1 { // ids grow with time in every project
				slices.SortFunc(ms, func(a, b Message) int { return cmp.Compare(a.ID, b.ID) })
				ms = ms[:min(len(ms), summaryThreadCap)]
			}
			sum := Summarize(ms)
			if !multi {
				single = ThreadSummaryResult{ThreadID: id, Summary: sum}
				if includeExamples {
					single.Examples = examples(ms)
				}
				return nil
			}
			digest.Threads = append(digest.Threads, DigestEntry{ThreadID: id, Summary: sum})
			for _, m := range sum.Mentions {
				counts[m.Name] += m.Count
			}
			digest.Aggregate.ActionItems = append(digest.Aggregate.ActionItems, sum.ActionItems...)
			digest.Aggregate.KeyPoints = append(digest.Aggregate.KeyPoints, sum.KeyPoints...)
		}
		digest.Aggregate.TopMentions = topNames(counts)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("summarizing thread: %w", err)
	}
	if multi {
		return digest, nil
	}
	return single, nil
}

func splitThreads(s string) []string {
	var ids []string
	seen := map[string]bool{}
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

func examples(ms []Message) []Example {
	out := []Example{}
	for i := 0; i < len(ms) && i < maxExamples; i++ {
		out = append(out, Example{ID: ms[i].ID, Subject: ms[i].Subject, From: ms[i].SenderName, CreatedTS: ts(ms[i].CreatedAt)})
	}
	return out
}

func topNames(counts map[string]int) []string {
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		return counts[names[i]] > counts[names[j]] || counts[names[i]] == counts[names[j]] && names[i] < names[j]
	})
	if len(names) > maxSummaryItems {
		names = names[:maxSummaryItems]
	}
	return names
}
