//go:build !linux

package main

import (
	"io"
	"os"
)

// protocolStdout returns stdout unchanged on platforms without dup3; the
// server itself never prints outside the protocol.
func protocolStdout() (io.Writer, error) { return os.Stdout, nil }
