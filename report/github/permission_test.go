package github

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/org/warden/internal/fakegithub"
)

// TestMaintainers: write, maintain and admin are trusted, triage, read and
// none are not; each login is looked up once (logins are
// case-insensitive); bots, GraphQL's "github-actions" and strings that are
// no login are never looked up (so a login cannot reach another path);
// beyond Max nothing is looked up and one line says so.
func TestMaintainers(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(testOwner, testRepo)
	c := start(t, fake, fakegithub.DefaultToken)
	for _, role := range []string{fakegithub.RoleAdmin, fakegithub.RoleMaintain, fakegithub.RoleWrite, fakegithub.RoleTriage, fakegithub.RoleRead, fakegithub.RoleNone} {
		fake.SetRole("u-"+role, role)
	}
	var warnings []string
	m := &Maintainers{Client: c.Client, Max: 6, Warn: func(s string) { warnings = append(warnings, s) }}
	want := map[string]bool{
		"u-admin": true, "u-maintain": true, "u-write": true, "U-Write": true,
		"u-triage": false, "u-read": false, "u-none": false, "stranger": false,
		"dependabot[bot]": false, "github-actions": false, "../../x": false, "a/b": false, "": false, "-x": false,
	}
	for _, login := range slices.Sorted(maps.Keys(want)) {
		if got := m.Trusted(t.Context(), login); got != want[login] {
			t.Errorf("Trusted(%q) = %v, want %v", login, got, want[login])
		}
	}
	var looked []string
	for _, r := range fake.RequestsTo(fakegithub.RouteGetPermission) {
		looked = append(looked, strings.Split(r.Path, "/")[5])
	}
	if len(looked) != 6 || slices.Contains(looked, "u-write") == slices.Contains(looked, "U-Write") {
		t.Errorf("looked up %q: want 6 (the bound), u-write once whatever its case, no bot or non-login", looked)
	}
	if m.Unchecked != 1 || len(warnings) != 1 || !strings.Contains(warnings[0], "more than 6 logins") {
		t.Errorf("unchecked %d, warnings %q; want 1 login beyond the bound and one line", m.Unchecked, warnings)
	}
}
