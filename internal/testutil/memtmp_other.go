//go:build !linux

package testutil

// memoryFS: none known outside Linux.
func memoryFS() string { return "" }
