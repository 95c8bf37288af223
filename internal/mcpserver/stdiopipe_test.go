package mcpserver

import (
	"bufio"
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/mcpstdio"
)

// stdioPipes is a server's and a client's transport, joined in process by
// two pipes. The server's is the one `mailgate serve` runs on its stdio
// (mcpstdio: its line framing and decoding); the client's writes and reads
// the same lines with go-sdk's own codec (jsonrpc.EncodeMessage and
// DecodeMessage), one message a line. go-sdk's in-memory transports ran
// both sides through its stream transport instead, which the server does
// not use, and which decodes each message four times over (a streaming
// decoder for the line, then as a batch, then as a message, each pass with
// a new 32 KiB buffer): a third of the package's JSON work.
func stdioPipes(t testing.TB) (server, client mcp.Transport) {
	t.Helper()
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	// The server's reader ends at the client's close (EOF); its writer
	// when the pipes close, at the latest here.
	t.Cleanup(func() {
		c2sW.Close()
		s2cR.Close()
	})
	return &mcpstdio.Transport{Reader: c2sR, Writer: s2cW, DrainTimeout: 5 * time.Second},
		&lineTransport{r: s2cR, w: c2sW}
}

// lineTransport is the client's end of stdioPipes.
type lineTransport struct {
	r *io.PipeReader
	w *io.PipeWriter
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{r: t.r, w: t.w, incoming: make(chan lineRead), closed: make(chan struct{})}
	go c.readLoop(bufio.NewReaderSize(t.r, 64<<10))
	return c, nil
}

type lineRead struct {
	msg jsonrpc.Message
	err error
}

type lineConn struct {
	r         *io.PipeReader
	wmu       sync.Mutex
	w         *io.PipeWriter
	incoming  chan lineRead
	closed    chan struct{}
	closeOnce sync.Once
}

func (c *lineConn) readLoop(r *bufio.Reader) {
	for {
		line, err := r.ReadBytes('\n')
		var rd lineRead
		if err != nil {
			rd.err = err
		} else {
			rd.msg, rd.err = jsonrpc.DecodeMessage(line[:len(line)-1])
		}
		select {
		case c.incoming <- rd:
		case <-c.closed:
			return
		}
		if rd.err != nil {
			return
		}
	}
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case rd := <-c.incoming:
		return rd.msg, rd.err
	}
}

func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(append(data, '\n'))
	return err
}

// Close ends the session as a client process ending does: the server reads
// EOF on its input, and its writes fail.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.w.Close()
		c.r.Close()
	})
	return nil
}

func (c *lineConn) SessionID() string { return "" }
