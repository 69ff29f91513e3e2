// Package hunks turns git's unified diff format into reviewable chunks: it
// parses the diff, drops what should not be reviewed (with a reason for each
// path), applies the size limits, coalesces and splits hunks into chunks with
// context, and orders the chunks by priority.
//
// It is pure: io.Reader and values in, values out. It reads no environment,
// flags or files of its own (file contents come through Options.Source). It
// must not import any other warden package, go-openai or go-github.
package hunks
