// Package channels is the channels tool set of agent mail: the coordination
// contract of a shared server where agents register for a UUID, heartbeat,
// talk on named channels, claim exact file paths and announce changes
// (MAILGATE_TOOLS=channels). It is an adapter beside the agent-mail core:
// it uses the core's public API (agentmail.Service) and a storage port of
// its own (Store), which both engines implement:
//
//   - a channel agent (UUID) acts as a core agent of the project (am_agents);
//   - channel X is the thread "channel.X" (am_messages, no recipients);
//   - a claim is an exclusive reservation of the exact path, reason
//     "channels:<uuid>", that never expires on its own;
//   - stale agents are retired by a sweep any process may run: one write
//     transaction selects and marks them, so exactly one process does it.
//
// The set's own tables (am_ch_agents, am_ch_senders, am_ch_changes) are
// read and written by sql.go: one body of SQL for both engines.
package channels

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// Channel defaults of the contract.
const (
	DefaultChannel       = "broadcast"
	DefaultStaleAfter    = 2 * time.Minute
	DefaultSweepInterval = 30 * time.Second
	// ThreadPrefix maps channel X to thread ThreadPrefix+X.
	ThreadPrefix = "channel."
	// ClaimReasonPrefix marks a reservation made by claim_files.
	ClaimReasonPrefix = "channels:"
	// StaleSubject is the subject of the broadcast a sweep sends.
	StaleSubject = "agent-stale"
)

// Program is the program of a core agent the set created.
const Program = "channels"

// claimExpiry is the expiry of a claim: claims last until released or until
// their agent goes stale, so they get an expiry no clock reaches.
var claimExpiry = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// Agent is one registered channel agent.
type Agent struct {
	UUID         string
	ProjectID    int64
	AgentID      int64 // the core agent it acts as
	Name         string
	Role         string
	RegisteredAt time.Time
	HeartbeatAt  time.Time
	StaleAt      time.Time
}

// Message is a channel message as read_messages shows it.
type Message struct {
	ID        int64
	SenderID  string // sender UUID, or the core agent name for mail from other sets
	Channel   string
	Subject   string
	Body      string
	CreatedAt time.Time
}

// Change is a change announcement.
type Change struct {
	ID          int64
	ProjectID   int64
	AgentUUID   string
	FilePath    string
	Summary     string
	AnnouncedAt time.Time
}

// Tables is what the set keeps beside the core's tables.
type Tables interface {
	InsertChannelAgent(ctx context.Context, a Agent) error
	// ChannelAgent returns a channel agent, stale or not (agentmail.ErrNotFound if none).
	ChannelAgent(ctx context.Context, uuid string) (Agent, error)
	// CoreAgentLive reports whether a live channel agent acts as agentID.
	CoreAgentLive(ctx context.Context, agentID int64) (bool, error)
	SetHeartbeat(ctx context.Context, uuid string, at time.Time) error
	// StaleChannelAgents lists live agents of the project with a heartbeat before cutoff.
	StaleChannelAgents(ctx context.Context, projectID int64, cutoff time.Time) ([]Agent, error)
	// MarkChannelAgentStale sets stale_at once; false when it was already set.
	MarkChannelAgentStale(ctx context.Context, uuid string, at time.Time) (bool, error)
	InsertChannelSender(ctx context.Context, messageID int64, uuid string) error
	// ChannelMessages lists channel messages (channel "" = every channel) after
	// since (zero = all), oldest first.
	ChannelMessages(ctx context.Context, projectID int64, channel string, since time.Time) ([]Message, error)
	InsertChange(ctx context.Context, c *Change) error
	// Changes lists announcements after since (zero = all) by uuid ("" = anyone), oldest first.
	Changes(ctx context.Context, projectID int64, since time.Time, uuid string) ([]Change, error)
}

// Tx is one transaction of the set: the core's tables and the set's.
type Tx interface {
	agentmail.Tx
	Tables
}

// Store is the set's storage port (see agentmail.Port), on the same
// database as the core's store (SQLStore; amstore.Store.Channels).
type Store = agentmail.Port[Tx]

// Options configure the set.
type Options struct {
	// ProjectKey is the absolute path of the project the channels live in.
	ProjectKey string
	// StaleAfter is how long an agent may go without a heartbeat. Default 2m.
	StaleAfter time.Duration
	// SweepInterval is the least time between two stale sweeps of one
	// process. Sweeps run inside calls, so no daemon is needed. Default 30s.
	SweepInterval time.Duration
}

// Set is the channels set over a Service, for one project.
type Set struct {
	s         *agentmail.Service
	st        Store
	opts      Options
	lastSweep atomic.Int64 // unix nanoseconds of the last sweep check
	project   agentmail.ProjectOnce
}

// New returns the channels set of the service on st (the port on the
// service's database), for the project opts.ProjectKey.
func New(s *agentmail.Service, st Store, opts Options) *Set {
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = DefaultStaleAfter
	}
	if opts.SweepInterval <= 0 {
		opts.SweepInterval = DefaultSweepInterval
	}
	return &Set{s: s, st: st, opts: opts}
}

func plain(sentinel error, format string, args ...any) *agentmail.Error {
	return agentmail.NewError("INVALID_ARGUMENT", sentinel, format, args...)
}

func notRegistered(id string) *agentmail.Error {
	return agentmail.NewError("NOT_FOUND", agentmail.ErrAgentNotFound, "agent %q is not registered", id)
}

// ensureProject creates the project on first use.
func (c *Set) ensureProject(ctx context.Context) error {
	return c.project.Ensure(ctx, c.s, c.opts.ProjectKey)
}

// begin runs on every call: the project exists, and stale agents are swept
// when the sweep interval has passed.
func (c *Set) begin(ctx context.Context) error {
	if err := c.ensureProject(ctx); err != nil {
		return err
	}
	now := c.s.Now().UnixNano()
	last := c.lastSweep.Load()
	if last != 0 && now-last < int64(c.opts.SweepInterval) {
		return nil
	}
	if !c.lastSweep.CompareAndSwap(last, now) {
		return nil // another call of this process is sweeping
	}
	if _, err := c.Sweep(ctx); err != nil {
		c.s.Logger().Warn("channels: stale sweep failed", "err", err)
	}
	return nil
}

// Sweep retires agents silent for longer than StaleAfter: their claims are
// released and an agent-stale message goes to the broadcast channel. A read
// looks first, so the common case (nobody stale) writes nothing; the write
// transaction then re-selects, so concurrent sweeps of several processes
// retire each agent exactly once. It returns how many agents it retired.
func (c *Set) Sweep(ctx context.Context) (int, error) {
	if err := c.ensureProject(ctx); err != nil {
		return 0, err
	}
	cutoff := c.s.Now().Add(-c.opts.StaleAfter)
	var any bool
	err := c.st.Read(ctx, func(tx Tx) error {
		p, err := c.s.ProjectIn(ctx, tx, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		st, err := tx.StaleChannelAgents(ctx, p.ID, cutoff)
		any = len(st) > 0
		return err
	})
	if err != nil || !any {
		return 0, err
	}
	n := 0
	err = c.st.Write(ctx, func(tx Tx) error {
		n = 0
		p, err := c.s.ProjectIn(ctx, tx, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		now := c.s.Now()
		stale, err := tx.StaleChannelAgents(ctx, p.ID, now.Add(-c.opts.StaleAfter))
		if err != nil {
			return err
		}
		for _, a := range stale {
			ok, err := tx.MarkChannelAgentStale(ctx, a.UUID, now)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if _, err := c.releaseClaims(ctx, tx, p.ID, a, nil, now); err != nil {
				return err
			}
			body := fmt.Sprintf("Agent %s (role: %s) went stale and was removed. Its file claims have been released.", a.Name, a.Role)
			if _, err := c.post(ctx, tx, p, a, DefaultChannel, StaleSubject, body, now); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// post stores a channel message sent by a.
func (c *Set) post(ctx context.Context, tx Tx, p agentmail.Project, a Agent, channel, subject, body string, now time.Time) (int64, error) {
	m := agentmail.Message{ProjectID: p.ID, SenderID: a.AgentID, ThreadID: ThreadPrefix + channel, Subject: subject,
		BodyMD: body, Importance: agentmail.ImportanceNormal, CreatedAt: now}
	if err := tx.InsertMessage(ctx, &m); err != nil {
		return 0, err
	}
	if err := tx.InsertChannelSender(ctx, m.ID, a.UUID); err != nil {
		return 0, err
	}
	return m.ID, nil
}

// NewUUID returns a random (version 4) UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// RegisterResult is register's answer.
type RegisterResult struct {
	AgentID string `json:"agent_id"`
}

// Register registers a channel agent under a new server-made UUID. Names
// need not be unique. The agent acts as the core agent of the same name
// unless a live channel agent already does; then it gets a core agent
// named "<name>-<first 8 of its UUID>".
func (c *Set) Register(ctx context.Context, name, role string) (RegisterResult, error) {
	name, role = strings.TrimSpace(name), strings.TrimSpace(role)
	if name == "" {
		return RegisterResult{}, plain(agentmail.ErrInvalidArgument, "name is required")
	}
	if role == "" {
		return RegisterResult{}, plain(agentmail.ErrInvalidArgument, "role is required")
	}
	if problem := agentmail.ChannelAgentNameProblem(name); problem != "" {
		return RegisterResult{}, plain(agentmail.ErrInvalidName, "invalid name %q: %s", name, problem)
	}
	if problem := agentmail.RoleProblem(role); problem != "" {
		return RegisterResult{}, plain(agentmail.ErrInvalidArgument, "invalid role: %s", problem)
	}
	if err := c.begin(ctx); err != nil {
		return RegisterResult{}, err
	}
	id := NewUUID()
	err := c.st.Write(ctx, func(tx Tx) error {
		p, err := c.s.ProjectIn(ctx, tx, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		now := c.s.Now()
		core, err := c.coreAgent(ctx, tx, p, name, id, now)
		if err != nil {
			return err
		}
		return tx.InsertChannelAgent(ctx, Agent{UUID: id, ProjectID: p.ID, AgentID: core.ID, Name: name, Role: role, RegisteredAt: now, HeartbeatAt: now})
	})
	if err != nil {
		return RegisterResult{}, err
	}
	return RegisterResult{AgentID: id}, nil
}

func (c *Set) coreAgent(ctx context.Context, tx Tx, p agentmail.Project, name, id string, now time.Time) (agentmail.Agent, error) {
	a, err := tx.AgentByName(ctx, p.ID, name)
	if err == nil {
		live, err := tx.CoreAgentLive(ctx, a.ID)
		if err != nil {
			return agentmail.Agent{}, err
		}
		if !live {
			// An identity a live agentmail session holds is not the
			// channels client's to act as (identity.go).
			if live, err = c.s.HeldElsewhere(ctx, tx, a, now); err != nil {
				return agentmail.Agent{}, err
			}
		}
		if !live {
			return a, tx.TouchAgent(ctx, a.ID, now)
		}
		name = name + "-" + id[:8]
	} else if !errors.Is(err, agentmail.ErrNotFound) {
		return agentmail.Agent{}, err
	}
	return agentmail.EnsureCompatAgent(ctx, tx, p, name, Program, now)
}

// live returns the live channel agent id and the set's project.
func (c *Set) live(ctx context.Context, tx Tx, id string) (Agent, agentmail.Project, error) {
	a, err := liveAgent(ctx, tx, id)
	if err != nil {
		return Agent{}, agentmail.Project{}, err
	}
	p, err := c.s.ProjectIn(ctx, tx, c.opts.ProjectKey)
	return a, p, err
}

// liveAgent returns the live channel agent id.
func liveAgent(ctx context.Context, tx Tables, id string) (Agent, error) {
	a, err := tx.ChannelAgent(ctx, id)
	if errors.Is(err, agentmail.ErrNotFound) || (err == nil && !a.StaleAt.IsZero()) {
		return Agent{}, notRegistered(id)
	}
	return a, err
}

// OK is heartbeat's answer.
type OK struct {
	OK bool `json:"ok"`
}

// Heartbeat records that the agent is alive.
func (c *Set) Heartbeat(ctx context.Context, id string) (OK, error) {
	if strings.TrimSpace(id) == "" {
		return OK{}, plain(agentmail.ErrInvalidArgument, "agent_id is required")
	}
	if err := c.begin(ctx); err != nil {
		return OK{}, err
	}
	err := c.st.Write(ctx, func(tx Tx) error {
		a, err := tx.ChannelAgent(ctx, id)
		if errors.Is(err, agentmail.ErrNotFound) || (err == nil && !a.StaleAt.IsZero()) {
			return agentmail.NewError("NOT_FOUND", agentmail.ErrAgentNotFound, "heartbeat: agent %q not found", id)
		} else if err != nil {
			return err
		}
		now := c.s.Now()
		if err := tx.SetHeartbeat(ctx, id, now); err != nil {
			return err
		}
		return tx.TouchAgent(ctx, a.AgentID, now)
	})
	if err != nil {
		var e *agentmail.Error
		if !errors.As(err, &e) {
			c.s.Logger().Error("channels: heartbeat failed", "err", err)
			err = agentmail.NewError("INTERNAL", err, "heartbeat: the store could not record it; retry")
		}
		return OK{}, err
	}
	return OK{OK: true}, nil
}

// SendResult is send_message's answer.
type SendResult struct {
	MessageID int64 `json:"message_id"`
}

// SendMessage posts a message on a channel (default broadcast).
func (c *Set) SendMessage(ctx context.Context, id, channel, subject, body string) (SendResult, error) {
	switch {
	case strings.TrimSpace(id) == "":
		return SendResult{}, plain(agentmail.ErrInvalidArgument, "agent_id is required")
	case strings.TrimSpace(subject) == "":
		return SendResult{}, plain(agentmail.ErrInvalidArgument, "subject is required")
	case body == "":
		return SendResult{}, plain(agentmail.ErrInvalidArgument, "body is required")
	case len(body) > agentmail.MaxBodyBytes:
		return SendResult{}, agentmail.Invalid("body is %d bytes; the limit is %d", len(body), agentmail.MaxBodyBytes)
	}
	channel = strings.TrimSpace(channel)
	if channel == "" {
		channel = DefaultChannel
	}
	if problem := agentmail.ChannelProblem(channel); problem != "" {
		return SendResult{}, plain(agentmail.ErrInvalidArgument, "invalid channel %q: %s", channel, problem)
	}
	if err := c.begin(ctx); err != nil {
		return SendResult{}, err
	}
	var out SendResult
	err := c.st.Write(ctx, func(tx Tx) error {
		a, p, err := c.live(ctx, tx, id)
		if err != nil {
			return err
		}
		out.MessageID, err = c.post(ctx, tx, p, a, channel, subject, body, c.s.Now())
		return err
	})
	return out, err
}

// MessageView is one read_messages entry.
type MessageView struct {
	ID        int64  `json:"id"`
	SenderID  string `json:"sender_id"`
	Channel   string `json:"channel"`
	Subject   string `json:"subject"`
	Body      string `json:"body"`
	CreatedAt string `json:"created_at"`
}

// MessagesResult is read_messages's answer.
type MessagesResult struct {
	Messages []MessageView `json:"messages"`
}

// parseSince parses the optional RFC 3339 since argument.
func parseSince(since string) (time.Time, error) {
	if strings.TrimSpace(since) == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(since))
	if err != nil {
		return time.Time{}, plain(agentmail.ErrInvalidArgument, "parsing since timestamp: %v", err)
	}
	return t.UTC(), nil
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ReadMessages lists channel messages after since, on one channel or all.
func (c *Set) ReadMessages(ctx context.Context, id, since, channel string) (MessagesResult, error) {
	if strings.TrimSpace(id) == "" {
		return MessagesResult{}, plain(agentmail.ErrInvalidArgument, "agent_id is required")
	}
	after, err := parseSince(since)
	if err != nil {
		return MessagesResult{}, err
	}
	if ch := strings.TrimSpace(channel); ch != "" {
		if problem := agentmail.ChannelProblem(ch); problem != "" {
			return MessagesResult{}, plain(agentmail.ErrInvalidArgument, "invalid channel %q: %s", ch, problem)
		}
	}
	if err := c.begin(ctx); err != nil {
		return MessagesResult{}, err
	}
	out := MessagesResult{Messages: []MessageView{}}
	err = c.st.Read(ctx, func(tx Tx) error {
		_, p, err := c.live(ctx, tx, id)
		if err != nil {
			return err
		}
		ms, err := tx.ChannelMessages(ctx, p.ID, strings.TrimSpace(channel), after)
		for _, m := range ms {
			out.Messages = append(out.Messages, MessageView{ID: m.ID, SenderID: m.SenderID, Channel: m.Channel,
				Subject: m.Subject, Body: m.Body, CreatedAt: rfc3339(m.CreatedAt)})
		}
		return err
	})
	return out, err
}

// NormalizeClaimPath makes "./a/b.go", "a//b.go" and "a/x/../b.go" the same
// claim; "" when nothing is left.
func NormalizeClaimPath(p, root string) string {
	if strings.TrimSpace(p) == "" {
		return ""
	}
	n := agentmail.NormalizePattern(p, root)
	if n == "**" {
		return ""
	}
	n = path.Clean(n)
	if n == "." {
		return ""
	}
	return n
}

func (c *Set) normalize(files []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		if n := NormalizeClaimPath(f, c.opts.ProjectKey); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// holderID names the holder of a reservation as channels clients see it.
func holderID(r agentmail.Reservation) string {
	if id, ok := strings.CutPrefix(r.Reason, ClaimReasonPrefix); ok {
		return id
	}
	return r.AgentName
}

// Conflict is one file another agent holds.
type Conflict struct {
	File   string `json:"file"`
	HeldBy string `json:"held_by"`
}

// ClaimResult is claim_files's answer.
type ClaimResult struct {
	Claimed   []string   `json:"claimed"`
	Conflicts []Conflict `json:"conflicts"`
}

// ClaimFiles claims files; those held by another agent (a channel claim or
// any agentmail reservation covering the path) are reported as conflicts,
// the rest are claimed. Re-claiming one's own file is a no-op.
func (c *Set) ClaimFiles(ctx context.Context, id string, files []string) (ClaimResult, error) {
	paths, err := c.beginFiles(ctx, id, files)
	if err != nil {
		return ClaimResult{}, err
	}
	// A claim refuses what another holds, so it must see every grant of
	// the project before it: it queues on the project's reservation lock,
	// which grants take too (agentmail.ReservationScope).
	var pid int64
	if err := c.st.Read(ctx, func(tx Tx) error {
		p, err := c.s.ProjectIn(ctx, tx, c.opts.ProjectKey)
		pid = p.ID
		return err
	}); err != nil {
		return ClaimResult{}, err
	}
	var out ClaimResult
	err = c.st.WriteScoped(ctx, agentmail.ReservationScope(pid), func(tx Tx) error {
		out = ClaimResult{Claimed: []string{}, Conflicts: []Conflict{}}
		a, p, err := c.live(ctx, tx, id)
		if err != nil {
			return err
		}
		now := c.s.Now()
		active, err := tx.Reservations(ctx, agentmail.ReservationQuery{ProjectID: p.ID, ActiveAt: now})
		if err != nil {
			return err
		}
		var grant []*agentmail.Reservation
		for _, f := range paths {
			mine, held := false, ""
			for _, r := range active {
				if r.PathPattern != f && !agentmail.CompilePattern(r.PathPattern).Match(f) {
					continue
				}
				if r.Reason == ClaimReasonPrefix+id || (r.AgentID == a.AgentID && !strings.HasPrefix(r.Reason, ClaimReasonPrefix)) {
					mine = mine || r.PathPattern == f && r.Reason == ClaimReasonPrefix+id
					continue
				}
				if held == "" {
					held = holderID(r)
				}
			}
			switch {
			case held != "":
				out.Conflicts = append(out.Conflicts, Conflict{File: f, HeldBy: held})
			case mine:
				out.Claimed = append(out.Claimed, f)
			default:
				out.Claimed = append(out.Claimed, f)
				grant = append(grant, &agentmail.Reservation{ProjectID: p.ID, AgentID: a.AgentID, PathPattern: f, Exclusive: true,
					Reason: ClaimReasonPrefix + id, CreatedAt: now, ExpiresAt: claimExpiry})
			}
		}
		if len(grant) > 0 {
			return tx.InsertReservations(ctx, grant)
		}
		return nil
	})
	return out, err
}

// ReleaseResult is release_files's answer.
type ReleaseResult struct {
	Released []string `json:"released"`
}

// ReleaseFiles releases the agent's own claims on files; it lists those
// that were held and are now free.
func (c *Set) ReleaseFiles(ctx context.Context, id string, files []string) (ReleaseResult, error) {
	paths, err := c.beginFiles(ctx, id, files)
	if err != nil {
		return ReleaseResult{}, err
	}
	var out ReleaseResult
	err = c.st.Write(ctx, func(tx Tx) error {
		a, p, err := c.live(ctx, tx, id)
		if err != nil {
			return err
		}
		out.Released, err = c.releaseClaims(ctx, tx, p.ID, a, paths, c.s.Now())
		return err
	})
	return out, err
}

// beginFiles checks the arguments of claim_files and release_files, and
// returns the normalized paths once the call has begun (see begin).
func (c *Set) beginFiles(ctx context.Context, id string, files []string) ([]string, error) {
	if strings.TrimSpace(id) == "" {
		return nil, plain(agentmail.ErrInvalidArgument, "agent_id is required")
	}
	if err := agentmail.CheckPaths("files", files); err != nil {
		return nil, err
	}
	paths := c.normalize(files)
	if len(paths) == 0 {
		return nil, plain(agentmail.ErrInvalidArgument, "files is required")
	}
	return paths, c.begin(ctx)
}

// releaseClaims releases a's claims on paths (nil = all) and returns them.
func (c *Set) releaseClaims(ctx context.Context, tx Tx, projectID int64, a Agent, paths []string, now time.Time) ([]string, error) {
	rs, err := tx.Reservations(ctx, agentmail.ReservationQuery{ProjectID: projectID, AgentID: a.AgentID, ActiveAt: now})
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, r := range rs {
		if r.Reason != ClaimReasonPrefix+a.UUID || (paths != nil && !slices.Contains(paths, r.PathPattern)) {
			continue
		}
		if err := tx.ReleaseReservation(ctx, r.ID, now); err != nil {
			return nil, err
		}
		out = append(out, r.PathPattern)
	}
	return out, nil
}

// ClaimView is one get_file_claims entry.
type ClaimView struct {
	FilePath  string `json:"file_path"`
	AgentID   string `json:"agent_id"`
	ClaimedAt string `json:"claimed_at"`
}

// ClaimsResult is get_file_claims's answer.
type ClaimsResult struct {
	Claims []ClaimView `json:"claims"`
}

// GetFileClaims lists active claims, and the project's other active
// reservations (agentmail set) since they hold files too; with files, only
// those covering one of them.
func (c *Set) GetFileClaims(ctx context.Context, files []string) (ClaimsResult, error) {
	if err := agentmail.CheckPaths("files", files); err != nil {
		return ClaimsResult{}, err
	}
	if err := c.begin(ctx); err != nil {
		return ClaimsResult{}, err
	}
	paths := c.normalize(files)
	out := ClaimsResult{Claims: []ClaimView{}}
	err := c.st.Read(ctx, func(t Tx) error {
		p, err := c.s.ProjectIn(ctx, t, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		rs, err := t.Reservations(ctx, agentmail.ReservationQuery{ProjectID: p.ID, ActiveAt: c.s.Now()})
		if err != nil {
			return err
		}
		for _, r := range rs {
			if len(paths) > 0 && !slices.ContainsFunc(paths, func(f string) bool {
				return r.PathPattern == f || agentmail.CompilePattern(r.PathPattern).Match(f)
			}) {
				continue
			}
			out.Claims = append(out.Claims, ClaimView{FilePath: r.PathPattern, AgentID: holderID(r), ClaimedAt: rfc3339(r.CreatedAt)})
		}
		return nil
	})
	slices.SortStableFunc(out.Claims, func(a, b ClaimView) int { return strings.Compare(a.FilePath, b.FilePath) })
	return out, err
}

// AnnounceResult is announce_change's answer.
type AnnounceResult struct {
	ChangeID int64 `json:"change_id"`
}

// AnnounceChange records a change announcement.
func (c *Set) AnnounceChange(ctx context.Context, id, filePath, summary string) (AnnounceResult, error) {
	switch {
	case strings.TrimSpace(id) == "":
		return AnnounceResult{}, plain(agentmail.ErrInvalidArgument, "agent_id is required")
	case strings.TrimSpace(filePath) == "":
		return AnnounceResult{}, plain(agentmail.ErrInvalidArgument, "file_path is required")
	case strings.TrimSpace(summary) == "":
		return AnnounceResult{}, plain(agentmail.ErrInvalidArgument, "summary is required")
	case len(summary) > agentmail.MaxBodyBytes:
		return AnnounceResult{}, plain(agentmail.ErrInvalidArgument, "summary is %d bytes; the limit is %d", len(summary), agentmail.MaxBodyBytes)
	}
	if err := agentmail.CheckPaths("file_path", []string{filePath}); err != nil {
		return AnnounceResult{}, err
	}
	if err := c.begin(ctx); err != nil {
		return AnnounceResult{}, err
	}
	var out AnnounceResult
	err := c.st.Write(ctx, func(tx Tx) error {
		_, p, err := c.live(ctx, tx, id)
		if err != nil {
			return err
		}
		fp := NormalizeClaimPath(filePath, c.opts.ProjectKey)
		if fp == "" {
			fp = strings.TrimSpace(filePath)
		}
		ch := Change{ProjectID: p.ID, AgentUUID: id, FilePath: fp, Summary: summary, AnnouncedAt: c.s.Now()}
		if err := tx.InsertChange(ctx, &ch); err != nil {
			return err
		}
		out.ChangeID = ch.ID
		return nil
	})
	return out, err
}

// ChangeView is one get_changes entry.
type ChangeView struct {
	ID          int64  `json:"id"`
	AgentID     string `json:"agent_id"`
	FilePath    string `json:"file_path"`
	Summary     string `json:"summary"`
	AnnouncedAt string `json:"announced_at"`
}

// ChangesResult is get_changes's answer.
type ChangesResult struct {
	Changes []ChangeView `json:"changes"`
}

// GetChanges lists announcements after since, optionally by one agent.
func (c *Set) GetChanges(ctx context.Context, since, id string) (ChangesResult, error) {
	after, err := parseSince(since)
	if err != nil {
		return ChangesResult{}, err
	}
	if err := c.begin(ctx); err != nil {
		return ChangesResult{}, err
	}
	out := ChangesResult{Changes: []ChangeView{}}
	err = c.st.Read(ctx, func(tx Tx) error {
		p, err := c.s.ProjectIn(ctx, tx, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		cs, err := tx.Changes(ctx, p.ID, after, strings.TrimSpace(id))
		for _, ch := range cs {
			out.Changes = append(out.Changes, ChangeView{ID: ch.ID, AgentID: ch.AgentUUID, FilePath: ch.FilePath,
				Summary: ch.Summary, AnnouncedAt: rfc3339(ch.AnnouncedAt)})
		}
		return err
	})
	return out, err
}
