package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// protocolStdout moves the MCP protocol off file descriptor 1 and points fd 1
// at stderr, so a stray print from any library (or a future bug of ours) lands
// in the log instead of corrupting the JSON-RPC stream, which Go clients
// cannot survive.
func protocolStdout() (io.Writer, error) {
	fd, err := unix.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("protecting stdout: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.Dup3(2, 1, 0); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("protecting stdout: %w", err)
	}
	return os.NewFile(uintptr(fd), "mcp-protocol"), nil
}
