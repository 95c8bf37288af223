package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// send sends a short Markdown message to another agent of the project, in
// one of a few threads per ticket.
func (c *client) send(ctx context.Context) {
	to := c.w.names[c.rng.IntN(len(c.w.names))]
	if len(c.w.names) > 1 {
		for to == c.name {
			to = c.w.names[c.rng.IntN(len(c.w.names))]
		}
	}
	c.seq++
	subject, body, thread := c.text.Message(c.seq)
	args := map[string]any{"project_key": c.w.cfg.project, "sender_name": c.name, "to": []string{to},
		"subject": subject, "body_md": body, "thread_id": thread}
	c.timed(ctx, toolSend, args, func(text string) error {
		// Every agent is in one project under the default policy (auto):
		// mail held for a contact request would mean the load is not
		// measuring delivery.
		var r struct {
			Count int               `json:"count"`
			Held  []json.RawMessage `json:"held"`
		}
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			return fmt.Errorf("send_message: decoding the answer: %w", err)
		}
		if r.Count != 1 || len(r.Held) > 0 {
			return fmt.Errorf("send_message: %d deliveries, %d held, want 1 and 0: %.200s", r.Count, len(r.Held), text)
		}
		return nil
	})
}

// fetch reads the agent's latest messages with their bodies, as an agent
// checking its inbox between steps does.
func (c *client) fetch(ctx context.Context) {
	args := map[string]any{"project_key": c.w.cfg.project, "agent_name": c.name, "limit": 10, "include_bodies": true}
	c.timed(ctx, toolFetch, args, func(text string) error {
		var msgs []json.RawMessage
		if err := json.Unmarshal([]byte(text), &msgs); err != nil {
			return fmt.Errorf("fetch_inbox: want a JSON list: %w", err)
		}
		return nil
	})
}

// search asks one of the query shapes the tool documents (loadtext.Query).
func (c *client) search(ctx context.Context) {
	q := c.text.Query()
	args := map[string]any{"project_key": c.w.cfg.project, "query": q, "limit": 20}
	c.timed(ctx, toolSearch, args, func(text string) error {
		var r struct {
			Result []json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			return fmt.Errorf("search_messages %q: decoding the answer: %w", q, err)
		}
		return nil
	})
}

// reserve reserves one file under the client's own directory and releases
// it again by id. The paths never overlap between clients, so a conflict
// means the server mixed up agents.
func (c *client) reserve(ctx context.Context) {
	path := fmt.Sprintf("load/%s/file%d.go", strings.ToLower(c.name), c.rng.IntN(8))
	args := map[string]any{"project_key": c.w.cfg.project, "agent_name": c.name, "paths": []string{path},
		"ttl_seconds": 60, "reason": "load test"}
	var id int64
	_, ok := c.timed(ctx, toolReserve, args, func(text string) error {
		var r struct {
			Granted []struct {
				ID int64 `json:"id"`
			} `json:"granted"`
			Conflicts []json.RawMessage `json:"conflicts"`
		}
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			return fmt.Errorf("file_reservation_paths: decoding the answer: %w", err)
		}
		if len(r.Granted) != 1 || len(r.Conflicts) > 0 {
			return fmt.Errorf("file_reservation_paths %s: %d granted, %d conflicts, want 1 and 0: %.200s", path, len(r.Granted), len(r.Conflicts), text)
		}
		id = r.Granted[0].ID
		return nil
	})
	if !ok {
		return
	}
	args = map[string]any{"project_key": c.w.cfg.project, "agent_name": c.name, "file_reservation_ids": []int64{id}}
	c.timed(ctx, toolRelease, args, func(text string) error {
		var r struct {
			Released int `json:"released"`
		}
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			return fmt.Errorf("release_file_reservations: decoding the answer: %w", err)
		}
		if r.Released != 1 {
			return fmt.Errorf("release_file_reservations %d: released %d, want 1", id, r.Released)
		}
		return nil
	})
}
