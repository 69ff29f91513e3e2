package fakegithub

import (
	"encoding/json"
	"testing"
)

// TestPermission: "Get repository permissions for a user" answers each
// role with GitHub's legacy permission (maintain is write, triage is
// read), a login without a role as a reader of a public repository, and
// 404 for a login GitHub does not know; every answer is checked against
// GitHub's description (newServer fails on a violation). It reads with
// either token, and needs one.
func TestPermission(t *testing.T) {
	t.Parallel()
	s, url := newServer(t)
	for _, role := range []string{RoleAdmin, RoleMaintain, RoleWrite, RoleTriage, RoleRead, RoleNone} {
		s.SetRole("u-"+role, role)
	}
	s.SetRole("ghost", "")
	for login, want := range map[string]string{
		"u-admin": "admin", "u-maintain": "write", "u-write": "write",
		"u-triage": "read", "u-read": "read", "u-none": "none", "stranger": "read",
	} {
		for _, tok := range []string{DefaultToken, DefaultReadOnlyToken} {
			a, _, raw := do(t, "GET", url+"/repos/o/r/collaborators/"+login+"/permission", tok, nil)
			var got struct {
				Permission string `json:"permission"`
				User       struct {
					Login       string          `json:"login"`
					Permissions map[string]bool `json:"permissions"`
				} `json:"user"`
			}
			if err := json.Unmarshal(raw, &got); err != nil || a.Status != 200 {
				t.Fatalf("%s: %+v %s", login, a, raw)
			}
			if got.Permission != want || got.User.Login != login || got.User.Permissions["push"] != (want == "write" || want == "admin") {
				t.Errorf("%s: permission %q, user %+v; want %q", login, got.Permission, got.User, want)
			}
		}
	}
	if a, _, _ := do(t, "GET", url+"/api/v3/repos/o/r/collaborators/ghost/permission", DefaultToken, nil); a.Status != 404 {
		t.Errorf("unknown login = %+v, want 404", a)
	}
	if a, _, _ := do(t, "GET", url+"/repos/o/r/collaborators/u-admin/permission", "", nil); a.Status != 401 {
		t.Errorf("no token = %+v, want 401", a)
	}
	if a, _, _ := do(t, "GET", url+"/repos/o/other/collaborators/u-admin/permission", DefaultToken, nil); a.Status != 404 {
		t.Errorf("another repository = %+v, want 404", a)
	}
	s.Fail(RouteGetPermission, Fault{Status: 502})
	if a, _, _ := do(t, "GET", url+"/repos/o/r/collaborators/u-admin/permission", DefaultToken, nil); a.Status != 502 {
		t.Errorf("scripted fault = %+v, want 502", a)
	}
	if n := len(s.RequestsTo(RouteGetPermission)); n != 18 {
		t.Errorf("%d requests recorded on the route, want 18", n)
	}
}
