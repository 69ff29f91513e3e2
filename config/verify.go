package config

import (
	"io/fs"

	"github.com/org/warden/related"
	"github.com/org/warden/review"
)

// checkVerify checks [review] verify and verify_route (the route itself is
// checked against the routes when the review is planned), context and
// context_chars.
func (c *fileConfig) checkVerify(bad badKey) error {
	if _, err := review.ParseVerifyMode(c.Review.Verify); err != nil {
		return bad(0, "review.verify", "%q: want off, auto or required", c.Review.Verify)
	}
	if c.Review.VerifyRoute != "" && c.verifyMode() == review.VerifyOff {
		return bad(0, "review.verify_route", "set, but review.verify is off: set verify = \"auto\" or \"required\"")
	}
	switch c.Review.Context {
	case "", "off", "auto":
	default:
		return bad(0, "review.context", "%q: want off or auto", c.Review.Context)
	}
	if c.Review.ContextChars < 0 || c.Review.ContextChars > maxContextChars {
		return bad(0, "review.context_chars", "must be between 0 (the default, %d) and %d, got %d", related.DefaultMaxChars, maxContextChars, c.Review.ContextChars)
	}
	return nil
}

// maxContextChars bounds [review] context_chars: 50,000 characters (about
// 12,000 tokens) keeps a request's adaptive deadline within a few times
// its base.
const maxContextChars = 50000

// ContextOptions is the context beyond the hunk of [review] context ("auto":
// the whole small file, else the enclosing declaration and the
// declarations the changed lines use, from repo); nil when off, the
// default.
func (c *fileConfig) ContextOptions(repo fs.FS) *related.Options {
	if c.Review.Context != "auto" {
		return nil
	}
	return &related.Options{Repo: repo, MaxChars: c.Review.ContextChars}
}

// verifyMode is [review] verify, checked by checkVerify.
func (c *fileConfig) verifyMode() review.VerifyMode {
	m, _ := review.ParseVerifyMode(c.Review.Verify)
	return m
}
