package action

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/org/warden/secrets"
)

// held names each value as a key variable.
func held(values ...string) []secrets.Value {
	var vs []secrets.Value
	for _, v := range values {
		vs = append(vs, secrets.Held("KEY", v))
	}
	return vs
}

// TestDerivedCacheSecret: the trusted domain's secret, when no
// results-cache-secret is given, comes from every model key the
// configuration may send (a route's own api_key_env included), each
// distinct key once; one key gives the hash of earlier versions, so their
// signed entries still verify. No key, no secret (unsigned).
func TestDerivedCacheSecret(t *testing.T) {
	t.Parallel()
	old := sha256.Sum256([]byte("warden results cache secret\x00sk-one"))
	if got := derivedCacheSecret(held("", "sk-one", " sk-one ", "")); !bytes.Equal(got, old[:]) {
		t.Errorf("one key: %x, want the earlier derivation %x", got, old)
	}
	for _, keys := range [][]string{nil, {"", "  "}} {
		if got := derivedCacheSecret(held(keys...)); got != nil {
			t.Errorf("derivedCacheSecret(%q) = %x, want nil", keys, got)
		}
	}
	route := derivedCacheSecret(held("", "", "", "acme-route-key")) // only the route's api_key_env is set
	both := derivedCacheSecret(held("sk-one", "acme-route-key"))
	if route == nil || bytes.Equal(route, both) || bytes.Equal(both, old[:]) {
		t.Errorf("route key %x, both %x: want a secret from a route's own key, different once another key counts", route, both)
	}
}
