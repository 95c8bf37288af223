// Package childproc ties the processes mailgate starts to mailgate's own
// life, so that none outlives it however it ends: stopped, timed out, or
// killed outright (TestNoProcessOutlivesServer in cmd/mailgate checks it).
package childproc
