//go:build !linux

package testutil

// memoryFS: none known outside Linux.
func memoryFS() string { return "" }

// sweepMemoryTemp: no memory filesystem is used here.
func sweepMemoryTemp(string) {}
