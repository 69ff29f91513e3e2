package fakegithub

import (
	"net/http"
	"strings"
)

// The repository roles GitHub assigns, highest first. A login's legacy
// "permission" maps maintain to write and triage to read (GitHub: "The
// permission attribute provides the legacy base roles of admin, write,
// read, and none, where the maintain role is mapped to write and the
// triage role is mapped to read").
const (
	RoleAdmin    = "admin"
	RoleMaintain = "maintain"
	RoleWrite    = "write"
	RoleTriage   = "triage"
	RoleRead     = "read"
	RoleNone     = "none"
)

// legacyPermission is the "permission" GitHub answers for role.
var legacyPermission = map[string]string{
	RoleAdmin: "admin", RoleMaintain: "write", RoleWrite: "write",
	RoleTriage: "read", RoleRead: "read", RoleNone: "none",
}

// SetRole gives login role (RoleAdmin ... RoleNone) on the repository, as
// "Get repository permissions for a user" answers it. A login without a
// role reads like any GitHub user on a public repository: read. An empty
// role makes the login unknown to GitHub: the lookup answers 404. It
// panics on any other role.
func (s *Server) SetRole(login, role string) {
	if _, ok := legacyPermission[role]; !ok && role != "" {
		panic("fakegithub: unknown repository role " + role)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.roles == nil {
		s.roles = map[string]string{}
	}
	s.roles[strings.ToLower(login)] = role // logins are case-insensitive
}

// getPermission is "Get repository permissions for a user": the login's
// legacy permission, its role and the user as a collaborator.
func (s *Server) getPermission(w http.ResponseWriter, r *http.Request) {
	login := r.PathValue("username")
	s.mu.Lock()
	role, set := s.roles[strings.ToLower(login)]
	s.mu.Unlock()
	if !set {
		role = RoleRead // any user may read a public repository
	}
	if role == "" {
		s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user")
		return
	}
	if !s.specOK(w, r, RouteGetPermission) {
		return
	}
	rank := map[string]int{RoleNone: 0, RoleRead: 1, RoleTriage: 2, RoleWrite: 3, RoleMaintain: 4, RoleAdmin: 5}[role]
	user := userJSON(login, userType(login))
	user["permissions"] = map[string]any{
		"pull": rank >= 1, "triage": rank >= 2, "push": rank >= 3, "maintain": rank >= 4, "admin": rank >= 5,
	}
	user["role_name"] = role
	writeJSON(w, http.StatusOK, map[string]any{"permission": legacyPermission[role], "role_name": role, "user": user})
}
