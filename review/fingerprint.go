package review

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/org/warden/hunks"
)

// FingerprintContext is how many non-blank lines of code on each side of
// a finding's lines its Twin takes, so that two findings of a skill on the
// same text ("return err") in one file are told apart.
const FingerprintContext = 2

// The rules of identify, hashed in so that a change of a rule is a change
// of every value it gives: fingerprintVersion for Finding.Fingerprint,
// twinVersion for Finding.Twin, priorVersion for Finding.PriorFingerprint
// (the rule of the version before, kept to read its markers).
const (
	fingerprintVersion = "warden.fingerprint/v3"
	twinVersion        = "warden.twin/v3"
	priorVersion       = "warden.fingerprint/v2"
)

// identify sets f's identity across runs from what the model cannot
// rephrase, as the chunk c shows the code (never its line numbers, which
// code above it moves, nor its title or description, which a model rewords
// from run to run):
//
//   - Fingerprint, 32 hex digits: its skill, its path and the new-side
//     content of the lines it is anchored on (white space collapsed, blank
//     lines left out). Dedup, dismissals and the "fixed" decision match on
//     it: when the code under a finding changes, its fingerprint does; an
//     edit beside it does not.
//   - Twin, 16 hex digits: up to FingerprintContext non-blank lines of code
//     on each side. Only to tell apart two findings of one skill on
//     identical code in one file (report.Match): a finding whose
//     neighbours change is still itself.
//   - PriorFingerprint: the fingerprint the version before gave (its lines
//     and neighbours in one hash), read only to recognise that version's
//     markers while the code and its neighbours stay the same.
func identify(c *hunks.Chunk, f *Finding) {
	text := chunkText(c)
	lo, hi := f.StartLine, max(f.StartLine, f.EndLine)
	var own []string
	for n := lo; n <= hi; n++ {
		if s := OneLine(text[n]); s != "" {
			own = append(own, s)
		}
	}
	before, after := around(text, lo, -1), around(text, hi, +1)
	head := []string{OneLine(f.Skill), strings.TrimSpace(f.Path)}

	f.Fingerprint = hash(32, append(append([]string{fingerprintVersion}, head...), own...))
	f.Twin = hash(16, append(append(append([]string{twinVersion}, before...), ""), after...))
	prior := append(append([]string{priorVersion}, head...), own...)
	prior = append(append(append(prior, ""), before...), "")
	f.PriorFingerprint = hash(32, append(prior, after...))
}

// hash is the first digits hex digits of the SHA-256 of fields, each
// ended by a NUL byte.
func hash(digits int, fields []string) string {
	h := sha256.New()
	for _, s := range fields {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:digits/2])
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
