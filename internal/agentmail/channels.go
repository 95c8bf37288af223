package agentmail

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The channels compatibility set: the coordination contract of a shared
// server where agents register for a UUID, heartbeat, talk on named
// channels, claim exact file paths and announce changes. It is a thin
// adapter over the same store the agentmail set uses:
//
//   - a channel agent (UUID) acts as a core agent of the project (am_agents);
//   - channel X is the thread "channel.X" (am_messages, no recipients);
//   - a claim is an exclusive reservation of the exact path, reason
//     "channels:<uuid>", that never expires on its own;
//   - stale agents are retired by a sweep any process may run: one write
//     transaction selects and marks them, so exactly one process does it.

// Channel defaults of the contract.
const (
	DefaultChannel       = "broadcast"
	DefaultStaleAfter    = 2 * time.Minute
	DefaultSweepInterval = 30 * time.Second
	// ChannelThreadPrefix maps channel X to thread ChannelThreadPrefix+X.
	ChannelThreadPrefix = "channel."
	// ClaimReasonPrefix marks a reservation made by claim_files.
	ClaimReasonPrefix = "channels:"
	// StaleSubject is the subject of the broadcast a sweep sends.
	StaleSubject = "agent-stale"
)

// claimExpiry is the expiry of a claim: claims last until released or until
// their agent goes stale, so they get an expiry no clock reaches.
var claimExpiry = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// ChAgent is one registered channel agent.
type ChAgent struct {
	UUID         string
	ProjectID    int64
	AgentID      int64 // the core agent it acts as
	Name         string
	Role         string
	RegisteredAt time.Time
	HeartbeatAt  time.Time
	StaleAt      time.Time
}

// ChMessage is a channel message as read_messages shows it.
type ChMessage struct {
	ID        int64
	SenderID  string // sender UUID, or the core agent name for mail from other sets
	Channel   string
	Subject   string
	Body      string
	CreatedAt time.Time
}

// ChChange is a change announcement.
type ChChange struct {
	ID          int64
	ProjectID   int64
	AgentUUID   string
	FilePath    string
	Summary     string
	AnnouncedAt time.Time
}

// ChannelsTx is what the channels set needs from a transaction beyond Tx.
// A store supports the set when its Tx also implements this.
type ChannelsTx interface {
	InsertChAgent(ctx context.Context, a ChAgent) error
	// ChAgent returns a channel agent, stale or not (ErrNotFound if none).
	ChAgent(ctx context.Context, uuid string) (ChAgent, error)
	// CoreAgentLive reports whether a live channel agent acts as agentID.
	CoreAgentLive(ctx context.Context, agentID int64) (bool, error)
	SetChHeartbeat(ctx context.Context, uuid string, at time.Time) error
	// StaleChAgents lists live agents of the project with a heartbeat before cutoff.
	StaleChAgents(ctx context.Context, projectID int64, cutoff time.Time) ([]ChAgent, error)
	// MarkChAgentStale sets stale_at once; false when it was already set.
	MarkChAgentStale(ctx context.Context, uuid string, at time.Time) (bool, error)
	InsertChSender(ctx context.Context, messageID int64, uuid string) error
	// ChMessages lists channel messages (channel "" = every channel) after
	// since (zero = all), oldest first.
	ChMessages(ctx context.Context, projectID int64, channel string, since time.Time) ([]ChMessage, error)
	InsertChange(ctx context.Context, c *ChChange) error
	// Changes lists announcements after since (zero = all) by uuid ("" = anyone), oldest first.
	Changes(ctx context.Context, projectID int64, since time.Time, uuid string) ([]ChChange, error)
}

// ChannelsOptions configure the channels set.
type ChannelsOptions struct {
	// ProjectKey is the absolute path of the project the channels live in.
	ProjectKey string
	// StaleAfter is how long an agent may go without a heartbeat. Default 2m.
	StaleAfter time.Duration
	// SweepInterval is the least time between two stale sweeps of one
	// process. Sweeps run inside calls, so no daemon is needed. Default 30s.
	SweepInterval time.Duration
}

// Channels is the channels set over a Service.
type Channels struct {
	s         *Service
	opts      ChannelsOptions
	lastSweep atomic.Int64 // unix nanoseconds of the last sweep check
	projMu    sync.Mutex
	projOK    bool
}

// Channels returns the channels set of the service for one project.
func (s *Service) Channels(opts ChannelsOptions) *Channels {
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = DefaultStaleAfter
	}
	if opts.SweepInterval <= 0 {
		opts.SweepInterval = DefaultSweepInterval
	}
	return &Channels{s: s, opts: opts}
}

// errUnsupported is returned when the store's Tx lacks the compat methods.
var errUnsupported = errors.New("the agent-mail store does not support the compatibility tool sets")

func chTx(tx Tx) (interface {
	Tx
	ChannelsTx
}, error) {
	c, ok := tx.(interface {
		Tx
		ChannelsTx
	})
	if !ok {
		return nil, errUnsupported
	}
	return c, nil
}

func plain(sentinel error, format string, args ...any) *Error {
	return newError("INVALID_ARGUMENT", sentinel, format, args...)
}

func notRegistered(id string) *Error {
	return newError("NOT_FOUND", ErrAgentNotFound, "agent %q is not registered", id)
}

// ensureProject creates the project on first use.
func (c *Channels) ensureProject(ctx context.Context) error {
	c.projMu.Lock()
	defer c.projMu.Unlock()
	if c.projOK {
		return nil
	}
	if _, err := c.s.EnsureProject(ctx, c.opts.ProjectKey); err != nil {
		return err
	}
	c.projOK = true
	return nil
}

// begin runs on every call: the project exists, and stale agents are swept
// when the sweep interval has passed.
func (c *Channels) begin(ctx context.Context) error {
	if err := c.ensureProject(ctx); err != nil {
		return err
	}
	now := c.s.now().UnixNano()
	last := c.lastSweep.Load()
	if last != 0 && now-last < int64(c.opts.SweepInterval) {
		return nil
	}
	if !c.lastSweep.CompareAndSwap(last, now) {
		return nil // another call of this process is sweeping
	}
	if _, err := c.Sweep(ctx); err != nil {
		c.s.log.Warn("channels: stale sweep failed", "err", err)
	}
	return nil
}

// Sweep retires agents silent for longer than StaleAfter: their claims are
// released and an agent-stale message goes to the broadcast channel. A read
// looks first, so the common case (nobody stale) writes nothing; the write
// transaction then re-selects, so concurrent sweeps of several processes
// retire each agent exactly once. It returns how many agents it retired.
func (c *Channels) Sweep(ctx context.Context) (int, error) {
	if err := c.ensureProject(ctx); err != nil {
		return 0, err
	}
	cutoff := c.s.clock().Add(-c.opts.StaleAfter)
	var any bool
	err := c.s.st.Read(ctx, func(t Tx) error {
		tx, err := chTx(t)
		if err != nil {
			return err
		}
		p, err := c.s.project(ctx, tx, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		st, err := tx.StaleChAgents(ctx, p.ID, cutoff)
		any = len(st) > 0
		return err
	})
	if err != nil || !any {
		return 0, err
	}
	n := 0
	err = c.s.st.Write(ctx, func(t Tx) error {
		n = 0
		tx, err := chTx(t)
		if err != nil {
			return err
		}
		p, err := c.s.project(ctx, tx, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		now := c.s.clock()
		stale, err := tx.StaleChAgents(ctx, p.ID, now.Add(-c.opts.StaleAfter))
		if err != nil {
			return err
		}
		for _, a := range stale {
			ok, err := tx.MarkChAgentStale(ctx, a.UUID, now)
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
func (c *Channels) post(ctx context.Context, tx interface {
	Tx
	ChannelsTx
}, p Project, a ChAgent, channel, subject, body string, now time.Time) (int64, error) {
	m := Message{ProjectID: p.ID, SenderID: a.AgentID, ThreadID: ChannelThreadPrefix + channel, Subject: subject,
		BodyMD: body, Importance: ImportanceNormal, CreatedAt: now}
	if err := tx.InsertMessage(ctx, &m); err != nil {
		return 0, err
	}
	if err := tx.InsertChSender(ctx, m.ID, a.UUID); err != nil {
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

// ChRegisterResult is register's answer.
type ChRegisterResult struct {
	AgentID string `json:"agent_id"`
}

// Register registers a channel agent under a new server-made UUID. Names
// need not be unique. The agent acts as the core agent of the same name
// unless a live channel agent already does; then it gets a core agent
// named "<name>-<first 8 of its UUID>".
func (c *Channels) Register(ctx context.Context, name, role string) (ChRegisterResult, error) {
	name, role = strings.TrimSpace(name), strings.TrimSpace(role)
	if name == "" {
		return ChRegisterResult{}, plain(ErrInvalidArgument, "name is required")
	}
	if role == "" {
		return ChRegisterResult{}, plain(ErrInvalidArgument, "role is required")
	}
	if problem := channelAgentNameProblem(name); problem != "" {
		return ChRegisterResult{}, plain(ErrInvalidName, "invalid name %q: %s", name, problem)
	}
	if problem := roleProblem(role); problem != "" {
		return ChRegisterResult{}, plain(ErrInvalidArgument, "invalid role: %s", problem)
	}
	if err := c.begin(ctx); err != nil {
		return ChRegisterResult{}, err
	}
	id := NewUUID()
	err := c.s.st.Write(ctx, func(t Tx) error {
		tx, err := chTx(t)
		if err != nil {
			return err
		}
		p, err := c.s.project(ctx, tx, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		now := c.s.clock()
		core, err := c.coreAgent(ctx, tx, p, name, id, now)
		if err != nil {
			return err
		}
		return tx.InsertChAgent(ctx, ChAgent{UUID: id, ProjectID: p.ID, AgentID: core.ID, Name: name, Role: role, RegisteredAt: now, HeartbeatAt: now})
	})
	if err != nil {
		return ChRegisterResult{}, err
	}
	return ChRegisterResult{AgentID: id}, nil
}

func (c *Channels) coreAgent(ctx context.Context, tx interface {
	Tx
	ChannelsTx
}, p Project, name, id string, now time.Time) (Agent, error) {
	a, err := tx.AgentByName(ctx, p.ID, name)
	if err == nil {
		live, err := tx.CoreAgentLive(ctx, a.ID)
		if err != nil {
			return Agent{}, err
		}
		if !live {
			// An identity a live agentmail session holds is not the
			// channels client's to act as (identity.go).
			v, err := c.s.mayResume(ctx, tx, a, "", now)
			if err != nil {
				return Agent{}, err
			}
			live = !v.ok
		}
		if !live {
			return a, tx.TouchAgent(ctx, a.ID, now)
		}
		name = name + "-" + id[:8]
	} else if !errors.Is(err, ErrNotFound) {
		return Agent{}, err
	}
	return ensureCoreAgent(ctx, tx, p, name, ProgramChannels, now)
}

// ensureCoreAgent returns the project's agent named name, creating it with
// the given program when missing (compat identities bypass the name rules
// of register_agent: their names come from another system).
func ensureCoreAgent(ctx context.Context, tx Tx, p Project, name, program string, now time.Time) (Agent, error) {
	a, err := tx.AgentByName(ctx, p.ID, name)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return a, err
	}
	// Bounded and visible even so: the name becomes a header of the Gmail
	// mirror and a line of the archive (a mailbox name is a tmux window or
	// AGENT_NAME, which only the local user sets).
	if problem := coreAgentNameProblem(name); problem != "" {
		return Agent{}, invalid("agent name %q cannot be used: %s. Rename the tmux window (or AGENT_NAME).", name, problem)
	}
	a = Agent{ProjectID: p.ID, Name: name, Program: program, Model: "unknown", InceptionAt: now, LastActiveAt: now,
		AttachmentsPolicy: "auto", ContactPolicy: PolicyAuto}
	return a, tx.InsertAgent(ctx, &a)
}

// liveAgent returns the live channel agent id.
func liveAgent(ctx context.Context, tx ChannelsTx, id string) (ChAgent, error) {
	a, err := tx.ChAgent(ctx, id)
	if errors.Is(err, ErrNotFound) || (err == nil && !a.StaleAt.IsZero()) {
		return ChAgent{}, notRegistered(id)
	}
	return a, err
}

// ChOK is heartbeat's answer.
type ChOK struct {
	OK bool `json:"ok"`
}

// Heartbeat records that the agent is alive.
func (c *Channels) Heartbeat(ctx context.Context, id string) (ChOK, error) {
	if strings.TrimSpace(id) == "" {
		return ChOK{}, plain(ErrInvalidArgument, "agent_id is required")
	}
	if err := c.begin(ctx); err != nil {
		return ChOK{}, err
	}
	err := c.s.st.Write(ctx, func(t Tx) error {
		tx, err := chTx(t)
		if err != nil {
			return err
		}
		a, err := tx.ChAgent(ctx, id)
		if errors.Is(err, ErrNotFound) || (err == nil && !a.StaleAt.IsZero()) {
			return newError("NOT_FOUND", ErrAgentNotFound, "heartbeat: agent %q not found", id)
		} else if err != nil {
			return err
		}
		now := c.s.clock()
		if err := tx.SetChHeartbeat(ctx, id, now); err != nil {
			return err
		}
		return tx.TouchAgent(ctx, a.AgentID, now)
	})
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			c.s.log.Error("channels: heartbeat failed", "err", err)
			err = newError("INTERNAL", err, "heartbeat: the store could not record it; retry")
		}
		return ChOK{}, err
	}
	return ChOK{OK: true}, nil
}

// ChSendResult is send_message's answer.
type ChSendResult struct {
	MessageID int64 `json:"message_id"`
}

// SendMessage posts a message on a channel (default broadcast).
func (c *Channels) SendMessage(ctx context.Context, id, channel, subject, body string) (ChSendResult, error) {
	switch {
	case strings.TrimSpace(id) == "":
		return ChSendResult{}, plain(ErrInvalidArgument, "agent_id is required")
	case strings.TrimSpace(subject) == "":
		return ChSendResult{}, plain(ErrInvalidArgument, "subject is required")
	case body == "":
		return ChSendResult{}, plain(ErrInvalidArgument, "body is required")
	case len(body) > maxBodyBytes:
		return ChSendResult{}, invalid("body is %d bytes; the limit is %d", len(body), maxBodyBytes)
	}
	channel = strings.TrimSpace(channel)
	if channel == "" {
		channel = DefaultChannel
	}
	if problem := ChannelProblem(channel); problem != "" {
		return ChSendResult{}, plain(ErrInvalidArgument, "invalid channel %q: %s", channel, problem)
	}
	if err := c.begin(ctx); err != nil {
		return ChSendResult{}, err
	}
	var out ChSendResult
	err := c.s.st.Write(ctx, func(t Tx) error {
		tx, err := chTx(t)
		if err != nil {
			return err
		}
		a, err := liveAgent(ctx, tx, id)
		if err != nil {
			return err
		}
		p, err := c.s.project(ctx, tx, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		out.MessageID, err = c.post(ctx, tx, p, a, channel, subject, body, c.s.clock())
		return err
	})
	return out, err
}

// ChMessageView is one read_messages entry.
type ChMessageView struct {
	ID        int64  `json:"id"`
	SenderID  string `json:"sender_id"`
	Channel   string `json:"channel"`
	Subject   string `json:"subject"`
	Body      string `json:"body"`
	CreatedAt string `json:"created_at"`
}

// ChMessagesResult is read_messages's answer.
type ChMessagesResult struct {
	Messages []ChMessageView `json:"messages"`
}

// parseSince parses the optional RFC 3339 since argument.
func parseSince(since string) (time.Time, error) {
	if strings.TrimSpace(since) == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(since))
	if err != nil {
		return time.Time{}, plain(ErrInvalidArgument, "parsing since timestamp: %v", err)
	}
	return t.UTC(), nil
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ReadMessages lists channel messages after since, on one channel or all.
func (c *Channels) ReadMessages(ctx context.Context, id, since, channel string) (ChMessagesResult, error) {
	if strings.TrimSpace(id) == "" {
		return ChMessagesResult{}, plain(ErrInvalidArgument, "agent_id is required")
	}
	after, err := parseSince(since)
	if err != nil {
		return ChMessagesResult{}, err
	}
	if ch := strings.TrimSpace(channel); ch != "" {
		if problem := ChannelProblem(ch); problem != "" {
			return ChMessagesResult{}, plain(ErrInvalidArgument, "invalid channel %q: %s", ch, problem)
		}
	}
	if err := c.begin(ctx); err != nil {
		return ChMessagesResult{}, err
	}
	out := ChMessagesResult{Messages: []ChMessageView{}}
	err = c.s.st.Read(ctx, func(t Tx) error {
		tx, err := chTx(t)
		if err != nil {
			return err
		}
		if _, err := liveAgent(ctx, tx, id); err != nil {
			return err
		}
		p, err := c.s.project(ctx, tx, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		ms, err := tx.ChMessages(ctx, p.ID, strings.TrimSpace(channel), after)
		for _, m := range ms {
			out.Messages = append(out.Messages, ChMessageView{ID: m.ID, SenderID: m.SenderID, Channel: m.Channel,
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
	n := NormalizePattern(p, root)
	if n == "**" {
		return ""
	}
	n = path.Clean(n)
	if n == "." {
		return ""
	}
	return n
}

func (c *Channels) normalize(files []string) []string {
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
func holderID(r Reservation) string {
	if id, ok := strings.CutPrefix(r.Reason, ClaimReasonPrefix); ok {
		return id
	}
	return r.AgentName
}

// ChConflict is one file another agent holds.
type ChConflict struct {
	File   string `json:"file"`
	HeldBy string `json:"held_by"`
}

// ChClaimResult is claim_files's answer.
type ChClaimResult struct {
	Claimed   []string     `json:"claimed"`
	Conflicts []ChConflict `json:"conflicts"`
}

// ClaimFiles claims files; those held by another agent (a channel claim or
// any agentmail reservation covering the path) are reported as conflicts,
// the rest are claimed. Re-claiming one's own file is a no-op.
func (c *Channels) ClaimFiles(ctx context.Context, id string, files []string) (ChClaimResult, error) {
	if strings.TrimSpace(id) == "" {
		return ChClaimResult{}, plain(ErrInvalidArgument, "agent_id is required")
	}
	if err := checkPaths("files", files); err != nil {
		return ChClaimResult{}, err
	}
	paths := c.normalize(files)
	if len(paths) == 0 {
		return ChClaimResult{}, plain(ErrInvalidArgument, "files is required")
	}
	if err := c.begin(ctx); err != nil {
		return ChClaimResult{}, err
	}
	var out ChClaimResult
	err := c.s.st.Write(ctx, func(t Tx) error {
		out = ChClaimResult{Claimed: []string{}, Conflicts: []ChConflict{}}
		tx, err := chTx(t)
		if err != nil {
			return err
		}
		a, err := liveAgent(ctx, tx, id)
		if err != nil {
			return err
		}
		p, err := c.s.project(ctx, tx, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		now := c.s.clock()
		active, err := tx.Reservations(ctx, ReservationQuery{ProjectID: p.ID, ActiveAt: now})
		if err != nil {
			return err
		}
		var grant []*Reservation
		for _, f := range paths {
			mine, held := false, ""
			for _, r := range active {
				if r.PathPattern != f && !CompilePattern(r.PathPattern).Match(f) {
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
				out.Conflicts = append(out.Conflicts, ChConflict{File: f, HeldBy: held})
			case mine:
				out.Claimed = append(out.Claimed, f)
			default:
				out.Claimed = append(out.Claimed, f)
				grant = append(grant, &Reservation{ProjectID: p.ID, AgentID: a.AgentID, PathPattern: f, Exclusive: true,
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

// ChReleaseResult is release_files's answer.
type ChReleaseResult struct {
	Released []string `json:"released"`
}

// ReleaseFiles releases the agent's own claims on files; it lists those
// that were held and are now free.
func (c *Channels) ReleaseFiles(ctx context.Context, id string, files []string) (ChReleaseResult, error) {
	if strings.TrimSpace(id) == "" {
		return ChReleaseResult{}, plain(ErrInvalidArgument, "agent_id is required")
	}
	if err := checkPaths("files", files); err != nil {
		return ChReleaseResult{}, err
	}
	paths := c.normalize(files)
	if len(paths) == 0 {
		return ChReleaseResult{}, plain(ErrInvalidArgument, "files is required")
	}
	if err := c.begin(ctx); err != nil {
		return ChReleaseResult{}, err
	}
	var out ChReleaseResult
	err := c.s.st.Write(ctx, func(t Tx) error {
		tx, err := chTx(t)
		if err != nil {
			return err
		}
		a, err := liveAgent(ctx, tx, id)
		if err != nil {
			return err
		}
		p, err := c.s.project(ctx, tx, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		out.Released, err = c.releaseClaims(ctx, tx, p.ID, a, paths, c.s.clock())
		return err
	})
	return out, err
}

// releaseClaims releases a's claims on paths (nil = all) and returns them.
func (c *Channels) releaseClaims(ctx context.Context, tx Tx, projectID int64, a ChAgent, paths []string, now time.Time) ([]string, error) {
	rs, err := tx.Reservations(ctx, ReservationQuery{ProjectID: projectID, AgentID: a.AgentID, ActiveAt: now})
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

// ChClaimView is one get_file_claims entry.
type ChClaimView struct {
	FilePath  string `json:"file_path"`
	AgentID   string `json:"agent_id"`
	ClaimedAt string `json:"claimed_at"`
}

// ChClaimsResult is get_file_claims's answer.
type ChClaimsResult struct {
	Claims []ChClaimView `json:"claims"`
}

// GetFileClaims lists active claims, and the project's other active
// reservations (agentmail set) since they hold files too; with files, only
// those covering one of them.
func (c *Channels) GetFileClaims(ctx context.Context, files []string) (ChClaimsResult, error) {
	if err := checkPaths("files", files); err != nil {
		return ChClaimsResult{}, err
	}
	if err := c.begin(ctx); err != nil {
		return ChClaimsResult{}, err
	}
	paths := c.normalize(files)
	out := ChClaimsResult{Claims: []ChClaimView{}}
	err := c.s.st.Read(ctx, func(t Tx) error {
		p, err := c.s.project(ctx, t, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		rs, err := t.Reservations(ctx, ReservationQuery{ProjectID: p.ID, ActiveAt: c.s.clock()})
		if err != nil {
			return err
		}
		for _, r := range rs {
			if len(paths) > 0 && !slices.ContainsFunc(paths, func(f string) bool {
				return r.PathPattern == f || CompilePattern(r.PathPattern).Match(f)
			}) {
				continue
			}
			out.Claims = append(out.Claims, ChClaimView{FilePath: r.PathPattern, AgentID: holderID(r), ClaimedAt: rfc3339(r.CreatedAt)})
		}
		return nil
	})
	slices.SortStableFunc(out.Claims, func(a, b ChClaimView) int { return strings.Compare(a.FilePath, b.FilePath) })
	return out, err
}

// ChAnnounceResult is announce_change's answer.
type ChAnnounceResult struct {
	ChangeID int64 `json:"change_id"`
}

// AnnounceChange records a change announcement.
func (c *Channels) AnnounceChange(ctx context.Context, id, filePath, summary string) (ChAnnounceResult, error) {
	switch {
	case strings.TrimSpace(id) == "":
		return ChAnnounceResult{}, plain(ErrInvalidArgument, "agent_id is required")
	case strings.TrimSpace(filePath) == "":
		return ChAnnounceResult{}, plain(ErrInvalidArgument, "file_path is required")
	case strings.TrimSpace(summary) == "":
		return ChAnnounceResult{}, plain(ErrInvalidArgument, "summary is required")
	case len(summary) > maxBodyBytes:
		return ChAnnounceResult{}, plain(ErrInvalidArgument, "summary is %d bytes; the limit is %d", len(summary), maxBodyBytes)
	}
	if err := checkPaths("file_path", []string{filePath}); err != nil {
		return ChAnnounceResult{}, err
	}
	if err := c.begin(ctx); err != nil {
		return ChAnnounceResult{}, err
	}
	var out ChAnnounceResult
	err := c.s.st.Write(ctx, func(t Tx) error {
		tx, err := chTx(t)
		if err != nil {
			return err
		}
		if _, err := liveAgent(ctx, tx, id); err != nil {
			return err
		}
		p, err := c.s.project(ctx, tx, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		fp := NormalizeClaimPath(filePath, c.opts.ProjectKey)
		if fp == "" {
			fp = strings.TrimSpace(filePath)
		}
		ch := ChChange{ProjectID: p.ID, AgentUUID: id, FilePath: fp, Summary: summary, AnnouncedAt: c.s.clock()}
		if err := tx.InsertChange(ctx, &ch); err != nil {
			return err
		}
		out.ChangeID = ch.ID
		return nil
	})
	return out, err
}

// ChChangeView is one get_changes entry.
type ChChangeView struct {
	ID          int64  `json:"id"`
	AgentID     string `json:"agent_id"`
	FilePath    string `json:"file_path"`
	Summary     string `json:"summary"`
	AnnouncedAt string `json:"announced_at"`
}

// ChChangesResult is get_changes's answer.
type ChChangesResult struct {
	Changes []ChChangeView `json:"changes"`
}

// GetChanges lists announcements after since, optionally by one agent.
func (c *Channels) GetChanges(ctx context.Context, since, id string) (ChChangesResult, error) {
	after, err := parseSince(since)
	if err != nil {
		return ChChangesResult{}, err
	}
	if err := c.begin(ctx); err != nil {
		return ChChangesResult{}, err
	}
	out := ChChangesResult{Changes: []ChChangeView{}}
	err = c.s.st.Read(ctx, func(t Tx) error {
		tx, err := chTx(t)
		if err != nil {
			return err
		}
		p, err := c.s.project(ctx, tx, c.opts.ProjectKey)
		if err != nil {
			return err
		}
		cs, err := tx.Changes(ctx, p.ID, after, strings.TrimSpace(id))
		for _, ch := range cs {
			out.Changes = append(out.Changes, ChChangeView{ID: ch.ID, AgentID: ch.AgentUUID, FilePath: ch.FilePath,
				Summary: ch.Summary, AnnouncedAt: rfc3339(ch.AnnouncedAt)})
		}
		return err
	})
	return out, err
}
