package report

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/org/warden/review"
)

// Fingerprint is a finding's stable identity across runs: the one review
// computed from its skill, path and the code it is on
// (review.Finding.Fingerprint), 32 hex digits; for a finding without a
// valid one (a report of an older version), LegacyFingerprint.
func Fingerprint(f review.Finding) string {
	if isHex(f.Fingerprint, 32) {
		return f.Fingerprint
	}
	return LegacyFingerprint(f)
}

// LegacyFingerprint is the identity earlier versions gave a finding: a
// hash of its skill, path and title (white space collapsed). It is read
// only to recognize the markers those versions posted, so that their
// threads and dismissals keep counting while the wording stays the same.
func LegacyFingerprint(f review.Finding) string {
	h := sha256.New()
	for _, s := range []string{OneLine(f.Skill), strings.TrimSpace(f.Path), OneLine(f.Title)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Mark is a finding's identity as a run records it on a pull request (the
// hidden marker of a review comment, an entry of warden's findings
// comment), for later runs to know the finding again (Match).
type Mark struct {
	// Version is the rule Fingerprint was made by: 3, review's
	// Fingerprint (the finding's own lines) with its Twin (the lines
	// beside them); 2, the version before's (review's PriorFingerprint:
	// both in one hash); 1, LegacyFingerprint (the title).
	Version     int
	Fingerprint string
	Twin        string
}

// MarkOf is f's mark: version 3 when f carries review's identity, else
// the one an earlier version gave it (2 for a report of the version
// before, whose Fingerprint is its version 2 one; 1 for one without).
func MarkOf(f review.Finding) Mark {
	switch {
	case isHex(f.Fingerprint, 32) && isHex(f.Twin, 16):
		return Mark{Version: 3, Fingerprint: f.Fingerprint, Twin: f.Twin}
	case isHex(f.Fingerprint, 32):
		return Mark{Version: 2, Fingerprint: f.Fingerprint}
	}
	return Mark{Version: 1, Fingerprint: LegacyFingerprint(f)}
}

// String is the mark as warden's markers write it: "v3:" the fingerprint,
// ":" and the twin; "v2:" and the fingerprint; or, for version 1, the
// fingerprint alone.
func (m Mark) String() string {
	switch m.Version {
	case 3:
		return "v3:" + m.Fingerprint + ":" + m.Twin
	case 2:
		return "v2:" + m.Fingerprint
	}
	return m.Fingerprint
}

// ParseMark reads a mark in String's form; ok is false for anything else.
func ParseMark(s string) (m Mark, ok bool) {
	if rest, v3 := strings.CutPrefix(s, "v3:"); v3 {
		fp, twin, _ := strings.Cut(rest, ":")
		m = Mark{Version: 3, Fingerprint: fp, Twin: twin}
		return m, isHex(fp, 32) && isHex(twin, 16)
	}
	if fp, v2 := strings.CutPrefix(s, "v2:"); v2 {
		return Mark{Version: 2, Fingerprint: fp}, isHex(fp, 32)
	}
	return Mark{Version: 1, Fingerprint: s}, isHex(s, 32)
}

// Match is the one rule that tells which finding of this run an earlier
// run's mark is: for each of marks, the index in fs of its finding, or -1
// when none is; no finding is paired twice, so a mark recorded n times
// stands for n findings. In order:
//
//  1. exactly: a version 3 mark by fingerprint and twin (the same code, the
//     same code beside it); a version 2 mark by the finding's
//     PriorFingerprint; a version 1 mark by its LegacyFingerprint (its
//     title unchanged);
//  2. then each version 3 mark still unpaired by its fingerprint alone,
//     marks and findings in order: the same code whose neighbours changed.
//
// So a finding keeps its identity through an edit beside it, and of two
// findings on identical code (twins) each keeps its own mark while either
// one's neighbours stay as they were. A version 2 mark holds its
// neighbours in its one hash: it is recognised only while they are
// unchanged.
func Match(marks []Mark, fs []review.Finding) []int {
	queues := map[string][]int{} // key → indexes of fs, in order
	for i, f := range fs {
		m := MarkOf(f)
		keys := []string{m.String(), "1:" + LegacyFingerprint(f)}
		if m.Version == 3 {
			keys = append(keys, "loose:"+m.Fingerprint)
		}
		if isHex(f.PriorFingerprint, 32) {
			keys = append(keys, "v2:"+f.PriorFingerprint)
		}
		for _, k := range keys {
			queues[k] = append(queues[k], i)
		}
	}
	paired := make([]bool, len(fs))
	take := func(key string) int {
		q := queues[key]
		for len(q) > 0 && paired[q[0]] {
			q = q[1:]
		}
		if len(q) == 0 {
			delete(queues, key)
			return -1
		}
		paired[q[0]] = true
		queues[key] = q[1:]
		return q[0]
	}
	out := make([]int, len(marks))
	for i, m := range marks {
		key := m.String()
		if m.Version == 1 {
			key = "1:" + m.Fingerprint
		}
		out[i] = take(key)
	}
	for i, m := range marks {
		if out[i] < 0 && m.Version == 3 {
			out[i] = take("loose:" + m.Fingerprint)
		}
	}
	return out
}

// isHex reports whether s is n lower-case hex digits.
func isHex(s string, n int) bool {
	return len(s) == n && strings.Trim(s, "0123456789abcdef") == ""
}
