package gitrepo

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestRemoteHidesItsToken: a Remote prints, formats and logs with its
// token REDACTED, whatever the verb.
func TestRemoteHidesItsToken(t *testing.T) {
	t.Parallel()
	const token = "ghs_secretTOKEN0123456789"
	r := NewRemote("origin", "https://github.com/", token)
	var log bytes.Buffer
	slog.New(slog.NewTextHandler(&log, nil)).Info("fetch", "remote", r)
	for _, s := range []string{r.String(), fmt.Sprint(r), fmt.Sprintf("%v %+v %#v %s", r, r, r, r), log.String()} {
		if strings.Contains(s, token) || !strings.Contains(s, "REDACTED") {
			t.Errorf("%q shows the token, or does not say it is redacted", s)
		}
	}
	if got := NewRemote("", "", "").String(); got != "origin" {
		t.Errorf("a remote without a token = %q, want origin", got)
	}
}
