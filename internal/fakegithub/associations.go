package fakegithub

import "strings"

// The author_association GitHub answers on pull requests, issue comments,
// reviews and review comments, derived from what the fake knows of the
// login: GitHub's enum (REST: the author-association schema; GraphQL:
// https://docs.github.com/graphql/reference/enums#commentauthorassociation)
// documents each value as
//
//	OWNER                  "Author is the owner of the repository."
//	MEMBER                 "Author is a member of the organization that owns the repository."
//	COLLABORATOR           "Author has been invited to collaborate on the repository."
//	CONTRIBUTOR            "Author has previously committed to the repository."
//	FIRST_TIME_CONTRIBUTOR "Author has not previously committed to the repository."
//	FIRST_TIMER            "Author has not previously committed to GitHub."
//	NONE                   "Author has no association with the repository."
//
// and GitHub gives the first that holds, in that order: an organization
// member who is also a collaborator reads MEMBER, and an organization
// member with no access to the repository reads MEMBER too (membership is
// not permission: https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user
// is what answers that). The fake's logins: the repository's owner
// (Server.Owner), the organization's members (AddOrgMember), the
// collaborators (SetRole with any role but none), the logins with commits
// on the repository (AddCommitter), and the authors of its pull requests
// (FIRST_TIME_CONTRIBUTOR while they have no commit there). FIRST_TIMER
// needs GitHub-wide history, which the fake does not keep: it never
// answers it (nor MANNEQUIN, a placeholder of an import).
const (
	AssocOwner                = "OWNER"
	AssocMember               = "MEMBER"
	AssocCollaborator         = "COLLABORATOR"
	AssocContributor          = "CONTRIBUTOR"
	AssocFirstTimeContributor = "FIRST_TIME_CONTRIBUTOR"
	AssocNone                 = "NONE"
)

// AddOrgMember makes login a member of the organization that owns the
// repository (Server.Owner is then an organization). Membership alone
// gives no repository role: SetRole sets that.
func (s *Server) AddOrgMember(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.orgMembers == nil {
		s.orgMembers = map[string]bool{}
	}
	s.orgMembers[strings.ToLower(login)] = true
}

// AddCommitter records that login has authored commits on the
// repository (its history, not a pull request's head).
func (s *Server) AddCommitter(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.committers == nil {
		s.committers = map[string]bool{}
	}
	s.committers[strings.ToLower(login)] = true
}

// Association is login's author_association on the repository, as GitHub
// derives it (see AssocOwner): what every author_association the fake
// answers is, unless a test set one explicitly.
func (s *Server) Association(login string) string {
	l := strings.ToLower(login)
	s.mu.Lock()
	defer s.mu.Unlock()
	role, collaborator := s.roles[l]
	authored := false
	for _, pr := range s.pulls {
		authored = authored || strings.EqualFold(prAuthor(pr), login)
	}
	switch {
	case l == strings.ToLower(s.Owner):
		return AssocOwner
	case s.orgMembers[l]:
		return AssocMember
	case collaborator && role != RoleNone && role != "":
		return AssocCollaborator
	case s.committers[l]:
		return AssocContributor
	case authored:
		return AssocFirstTimeContributor
	}
	return AssocNone
}

// association is explicit when a test set it, else login's derived one.
func (s *Server) association(explicit, login string) string {
	if explicit != "" {
		return explicit
	}
	return s.Association(login)
}

// prAuthor is the login of pr's author.
func prAuthor(pr *PullRequest) string {
	if pr.User == "" {
		return "octocat"
	}
	return pr.User
}
