package review

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/org/warden/hunks"
)

// FingerprintContext is how many non-blank lines of code on each side of
// a finding's lines its fingerprint takes, so that two findings of a skill
// on the same text ("return err") in one file are told apart.
const FingerprintContext = 2

// fingerprintVersion names the rule of fingerprintOf; it is hashed in, so
// that a change of the rule is a change of every fingerprint.
const fingerprintVersion = "warden.fingerprint/v2"

// fingerprintOf is a finding's identity across runs, from what the model
// cannot rephrase: its skill, its path, the new-side content of the lines
// it is anchored on (white space collapsed, blank lines left out) and up to
// FingerprintContext non-blank lines of code on each side, as the chunk
// shows them. Not its line numbers (code above it moves them) and not its
// title or description (a model rewords them from run to run). 32 hex
// digits. Dedup, dismissals and the "fixed" decision all read it: when the
// code under a finding changes, its fingerprint does.
func fingerprintOf(c *hunks.Chunk, f Finding) string {
	text := chunkText(c)
	h := sha256.New()
	field := func(s string) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	field(fingerprintVersion)
	field(OneLine(f.Skill))
	field(strings.TrimSpace(f.Path))
	lo, hi := f.StartLine, max(f.StartLine, f.EndLine)
	for n := lo; n <= hi; n++ {
		if s := OneLine(text[n]); s != "" {
			field(s)
		}
	}
	field("") // the anchored lines end here
	for _, s := range around(text, lo, -1) {
		field(s)
	}
	field("")
	for _, s := range around(text, hi, +1) {
		field(s)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// chunkText is the new-side text the chunk knows, by line number: its
// context before and after, and its own context and added lines.
func chunkText(c *hunks.Chunk) map[int]string {
	text := map[int]string{}
	for _, l := range c.Before {
		text[l.Line] = l.Text
	}
	for _, l := range c.After {
		text[l.Line] = l.Text
	}
	for _, l := range c.Lines {
		if l.Op != hunks.Delete {
			text[l.NewLine] = l.Text
		}
	}
	return text
}

// around is up to FingerprintContext non-blank lines from line from
// outward (dir -1 before it, +1 after it), nearest first, white space
// collapsed; it stops at the first line the chunk does not know.
func around(text map[int]string, from, dir int) []string {
	var out []string
	for n := from + dir; len(out) < FingerprintContext; n += dir {
		s, ok := text[n]
		if !ok {
			break
		}
		if s = OneLine(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
