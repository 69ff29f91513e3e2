package github

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// warden's hidden records: the state it keeps on GitHub between runs, in
// HTML comments ("<!-- warden:... -->") that GitHub does not render, at the
// end of what warden writes (a comment, a review comment, a reply, a check
// run's summary). Anyone who can post as warden's login can write such a
// comment: every workflow of the repository that uses GITHUB_TOKEN posts as
// github-actions[bot], and one that quotes a pull request's title quotes
// whatever its author typed. So a record that can change the gate (a
// dismissal, an acceptance, the findings comment's state, the head the last
// complete review covered) is sealed: it carries an HMAC-SHA256 of the
// repository and its text under the state key (SetStateKey), a secret only
// warden's privileged job holds, and is believed only when the seal holds.
// A record without a seal, or with one that does not hold, is text.
//
// Records that cannot change the gate (a fingerprint marker, which only
// keeps warden from posting a comment twice) are sealed too and read
// unsealed as well, so that the comments of earlier versions keep their
// place: a forged one can at most keep one inline comment from being
// posted again; the check run still counts the finding.

// sealLen is the seal's length in hex digits: 128 bits of HMAC-SHA256.
const sealLen = 32

// recordRE finds a hidden record: its text and, when sealed, the seal.
var recordRE = regexp.MustCompile(`<!-- warden:([a-z][a-z0-9-]*(?:[: ][^<>\n]*?)??)(?: sig=([0-9a-f]{32}))? -->`)

// Record is one of warden's hidden records as read from GitHub.
type Record struct {
	// Text is what follows "warden:", e.g. "dismissed:<fingerprint>".
	Text string
	// Sealed is set when the record carries a seal that holds under the
	// state key: warden's privileged job wrote it.
	Sealed bool
}

// SetStateKey sets the key that seals warden's hidden records (a secret
// of the privileged job: input state-secret, else the results cache's
// secret, else one derived from the model keys). Nil: nothing is sealed,
// and no record can change the gate. Call it before the Client is shared.
func (c *Client) SetStateKey(key []byte) {
	if len(key) == 0 {
		c.stateKey = nil
		return
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("warden hidden records v1"))
	c.stateKey = m.Sum(nil)
}

// Sealing reports whether the Client seals its records (SetStateKey).
func (c *Client) Sealing() bool { return len(c.stateKey) > 0 }

// seal is the seal of text in this repository; "" without a key.
func (c *Client) seal(text string) string {
	if len(c.stateKey) == 0 {
		return ""
	}
	m := hmac.New(sha256.New, c.stateKey)
	m.Write([]byte(strings.ToLower(c.owner + "/" + c.repo)))
	m.Write([]byte{0})
	m.Write([]byte(text))
	return hex.EncodeToString(m.Sum(nil))[:sealLen]
}

// Mark is the hidden record of text, sealed when the Client has a state
// key. text must be warden's own (no "<", ">" or newline): it panics
// otherwise, since a record built from untrusted text is a bug.
func (c *Client) Mark(text string) string {
	if strings.ContainsAny(text, "<>\n") || !recordRE.MatchString("<!-- warden:"+text+" -->") {
		panic("github: not a record's text: " + text)
	}
	if s := c.seal(text); s != "" {
		return "<!-- warden:" + text + " sig=" + s + " -->"
	}
	return "<!-- warden:" + text + " -->"
}

// Records reads the hidden records in body, in order, each with whether
// its seal holds.
func (c *Client) Records(body string) []Record {
	var out []Record
	for _, m := range recordRE.FindAllStringSubmatch(body, -1) {
		out = append(out, Record{Text: m[1], Sealed: c.sealed(m[1], m[2])})
	}
	return out
}

// LastRecord reads the record that ends body: warden appends its record
// last, on a line of its own, so a record anywhere else (inside text warden
// rendered) is not warden's. ok is false when body does not end with one.
func (c *Client) LastRecord(body string) (Record, bool) {
	body = strings.TrimRight(body, " \n")
	i := strings.LastIndexByte(body, '\n')
	line := body[i+1:]
	m := recordRE.FindStringSubmatch(line)
	if m == nil || m[0] != line {
		return Record{}, false
	}
	return Record{Text: m[1], Sealed: c.sealed(m[1], m[2])}, true
}

func (c *Client) sealed(text, sig string) bool {
	want := c.seal(text)
	return want != "" && sig != "" && hmac.Equal([]byte(want), []byte(sig))
}
