// Package mcpstdio is mailgate's MCP stdio transport: newline-delimited
// JSON-RPC over stdin and stdout that answers malformed lines instead of
// ending the session, and drains replies in flight at EOF. It also holds the
// one check both transports share (NoMethodRequest), so the HTTP front door
// needs no tool code.
package mcpstdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxLineLength bounds one inbound JSON-RPC line, as go-sdk's stdio
// transport does.
const DefaultMaxLineLength = 16 << 20

// Transport serves newline-delimited JSON-RPC over a reader and a writer
// (stdin and the protocol's stdout).
//
// It replaces go-sdk's StdioTransport for two reasons. go-sdk ends the session
// on the first malformed line, losing every in-flight reply; a client bug or a
// stray line should cost one error, not the server. And go-sdk returns at once
// on stdin EOF, dropping replies still being computed; here EOF waits (up to
// DrainTimeout) until every request read so far has been answered.
type Transport struct {
	Reader        io.Reader
	Writer        io.Writer
	MaxLineLength int           // 0 = DefaultMaxLineLength
	DrainTimeout  time.Duration // 0 = 30 s
	Logger        *slog.Logger
}

// Connect implements mcp.Transport.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	max := t.MaxLineLength
	if max <= 0 {
		max = DefaultMaxLineLength
	}
	drain := t.DrainTimeout
	if drain <= 0 {
		drain = 30 * time.Second
	}
	logger := t.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &stdioConn{
		w:        t.Writer,
		incoming: make(chan readResult),
		closed:   make(chan struct{}),
		inflight: map[jsonrpc.ID]bool{},
		drain:    drain,
		logger:   logger,
	}
	c.idle = sync.NewCond(&c.mu)
	go c.readLoop(bufio.NewReaderSize(t.Reader, 64<<10), max)
	return c, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

type stdioConn struct {
	wmu sync.Mutex // one message per Write, never interleaved
	w   io.Writer

	incoming  chan readResult
	closed    chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	idle     *sync.Cond
	inflight map[jsonrpc.ID]bool // requests read and not yet answered
	drain    time.Duration
	logger   *slog.Logger
}

func (c *stdioConn) SessionID() string { return "" }

func (c *stdioConn) readLoop(r *bufio.Reader, max int) {
	for {
		line, tooLong, err := readLine(r, max)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if msg, ok := c.decode(line, tooLong, max); ok {
				if !c.deliver(readResult{msg: msg}) {
					return
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.waitIdle()
			}
			c.deliver(readResult{err: err})
			return
		}
	}
}

// decode turns one line into a message, or answers the peer with the JSON-RPC
// error the line deserves and reports false.
func (c *stdioConn) decode(line []byte, tooLong bool, max int) (jsonrpc.Message, bool) {
	if tooLong {
		c.writeError(nil, -32700, fmt.Sprintf("Parse error: message exceeds %d bytes", max))
		return nil, false
	}
	msg, err := decodeLine(line)
	if err == nil {
		switch m := msg.(type) {
		case *jsonrpc.Request:
			if m.IsCall() {
				c.mu.Lock()
				c.inflight[m.ID] = true
				c.mu.Unlock()
			}
		case *jsonrpc.Response:
			// go-sdk reads any object without a method as a response and
			// drops it when no call of ours has its id. One with neither
			// result nor error is a request that lacks its method: JSON-RPC
			// 2.0 answers it with -32600.
			if id, bad := NoMethodRequest(line); bad {
				c.writeError(id, -32600, "Invalid Request: no method")
				return nil, false
			}
		}
		return msg, true
	}
	// Tell apart unparseable text (-32700) from valid JSON that is not a
	// valid JSON-RPC message (-32600), answering with the id when it has one.
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if jerr := json.Unmarshal(line, &probe); jerr != nil {
		var arr []json.RawMessage
		if json.Unmarshal(line, &arr) == nil {
			c.writeError(nil, -32600, "Invalid Request: JSON-RPC batches are not supported")
			return nil, false
		}
		c.logger.Warn("malformed JSON-RPC line", "error", jerr, "bytes", len(line))
		c.writeError(nil, -32700, "Parse error: "+jerr.Error())
		return nil, false
	}
	c.logger.Warn("invalid JSON-RPC message", "error", err)
	c.writeError(probe.ID, -32600, "Invalid Request: "+err.Error())
	return nil, false
}

// NoMethodRequest reports whether a JSON-RPC object (one line or one HTTP
// body) has an id but neither a method nor a result or error: a request
// without its method, which JSON-RPC 2.0 answers with -32600 and go-sdk
// silently drops. id is the object's id, for the answer.
func NoMethodRequest(obj []byte) (id json.RawMessage, bad bool) {
	var probe map[string]json.RawMessage
	if json.Unmarshal(obj, &probe) != nil {
		return nil, false
	}
	id, hasID := probe["id"]
	_, hasMethod := probe["method"]
	_, hasResult := probe["result"]
	_, hasError := probe["error"]
	return id, hasID && !hasMethod && !hasResult && !hasError
}

func (c *stdioConn) deliver(r readResult) bool {
	select {
	case c.incoming <- r:
		return true
	case <-c.closed:
		return false
	}
}

// waitIdle blocks until every request read so far has been answered, or the
// drain timeout passes, so a client that closes stdin right after its last
// request still gets the answer.
func (c *stdioConn) waitIdle() {
	deadline := time.Now().Add(c.drain)
	timer := time.AfterFunc(c.drain, func() {
		c.mu.Lock()
		c.idle.Broadcast()
		c.mu.Unlock()
	})
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.inflight) > 0 && time.Now().Before(deadline) {
		c.idle.Wait()
	}
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case r := <-c.incoming:
		return r.msg, r.err
	}
}

func (c *stdioConn) Write(_ context.Context, msg jsonrpc.Message) error {
	line, err := encodeLine(msg)
	if err != nil {
		return fmt.Errorf("encoding message: %w", err)
	}
	c.wmu.Lock()
	_, err = c.w.Write(line)
	c.wmu.Unlock()
	if err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.inflight, resp.ID)
		c.idle.Broadcast()
		c.mu.Unlock()
	}
	return nil
}

func (c *stdioConn) writeError(id json.RawMessage, code int, message string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	if err != nil {
		return
	}
	if err := c.writeLine(data); err != nil {
		c.logger.Warn("writing JSON-RPC error", "error", err)
	}
}

func (c *stdioConn) writeLine(data []byte) error {
	buf := make([]byte, 0, len(data)+1)
	buf = append(append(buf, data...), '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(buf)
	return err
}

func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// readLine reads one '\n'-terminated line. A line longer than max is consumed
// and reported as tooLong, so the stream stays in sync.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, tooLong, err
	}
}
