package mcpserver

import (
	"context"
	"log/slog"
)

// sdkLogger is the logger handed to go-sdk. The SDK logs every session's
// life at info ("server run start", "server connecting", "session
// connected", …): three lines or more per stdio session and per HTTP client,
// which bury the one line that says what is served. Its info records are
// demoted to debug (MAILGATE_LOG_LEVEL=debug shows them); its warnings and
// errors pass unchanged.
func sdkLogger(l *slog.Logger) *slog.Logger {
	return slog.New(demoteInfo{l.Handler()})
}

type demoteInfo struct{ h slog.Handler }

func (d demoteInfo) level(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}

func (d demoteInfo) Enabled(ctx context.Context, l slog.Level) bool {
	return d.h.Enabled(ctx, d.level(l))
}

func (d demoteInfo) Handle(ctx context.Context, r slog.Record) error {
	r.Level = d.level(r.Level)
	return d.h.Handle(ctx, r)
}

func (d demoteInfo) WithAttrs(as []slog.Attr) slog.Handler { return demoteInfo{d.h.WithAttrs(as)} }
func (d demoteInfo) WithGroup(name string) slog.Handler    { return demoteInfo{d.h.WithGroup(name)} }
