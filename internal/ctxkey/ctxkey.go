// Package ctxkey is the one way a value rides in a context.Context: a typed
// key, so each value is stored and read back as its own type, with no
// private key type and type assertion written again at every use (as
// tailscale's util/ctxkey).
package ctxkey

import "context"

// Key carries values of type T. Keys made by separate calls of New are
// distinct, whatever their names.
type Key[T any] struct{ name *string }

// New returns a new key; name says what it carries (String).
func New[T any](name string) Key[T] { return Key[T]{name: &name} }

// With returns ctx carrying v under k.
func (k Key[T]) With(ctx context.Context, v T) context.Context {
	return context.WithValue(ctx, k, v)
}

// Value is what k carries in ctx: T's zero value when it carries nothing.
func (k Key[T]) Value(ctx context.Context) T {
	v, _ := ctx.Value(k).(T)
	return v
}

// String is the key's name, so a context printed (%v) says what it holds.
func (k Key[T]) String() string { return *k.name }
