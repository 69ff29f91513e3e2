package fakegithub

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// A workflow's GITHUB_TOKEN has the permissions its workflow declares:
// "If you specify the access for any of these permissions, all of those
// that are not specified are set to none" (docs.github.com, "Controlling
// permissions for GITHUB_TOKEN"; metadata is always read), and a fork's
// pull request run gets at most read: "the maximum access for pull
// requests from public forked repositories" is read on every scope
// (docs.github.com, "Automatic token authentication", permissions table).
// GrantToken mints such a token; each route needs the permission GitHub's
// "Permissions required for GitHub Apps" names for it (permissionFor),
// and a request without it is GitHub's 403 "Resource not accessible by
// integration".

// Permissions are a token's scopes ("contents", "pull-requests",
// "issues", "checks", "actions", ...) and their access ("read",
// "write"), as a workflow's permissions: block writes them.
type Permissions map[string]string

// GrantToken mints a token with perms and returns it; forkCap caps every
// scope at read (a fork's pull request run). An unknown access panics.
func (s *Server) GrantToken(perms Permissions, forkCap bool) string {
	p := Permissions{}
	for k, v := range perms {
		switch v {
		case "read", "write", "none":
		default:
			panic(fmt.Sprintf("fakegithub: permission %s: %q is not read, write or none", k, v))
		}
		if forkCap && v == "write" {
			v = "read"
		}
		p[k] = v
	}
	tok := "ghs_scoped" + randomHex(16)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scoped == nil {
		s.scoped = map[string]Permissions{}
	}
	s.scoped[tok] = p
	return tok
}

// need is a permission a route needs: any one of scopes at access.
type need struct {
	scopes []string
	write  bool
}

// permissionFor are the routes' permissions, from "Permissions required
// for GitHub Apps" (docs.github.com/rest/authentication/permissions-required-for-github-apps):
// check runs "Checks"; pull requests, their files, reviews and review
// comments "Pull requests"; a pull request's conversation comments and
// their reactions "Issues" or "Pull requests"; artifacts and workflow runs
// "Actions"; a collaborator's permission "Metadata" (always granted).
var permissionFor = map[string]need{
	RouteCreateCheckRun: {[]string{"checks"}, true}, RouteUpdateCheckRun: {[]string{"checks"}, true},
	RouteGetCheckRun: {[]string{"checks"}, false}, RouteListCheckRuns: {[]string{"checks"}, false},
	RouteGetPullRequest: {[]string{"pull-requests"}, false}, RouteListFiles: {[]string{"pull-requests"}, false},
	RouteListReviewComments: {[]string{"pull-requests"}, false}, RouteGetReviewComment: {[]string{"pull-requests"}, false},
	RouteListReviews: {[]string{"pull-requests"}, false}, RouteCreateReview: {[]string{"pull-requests"}, true},
	RouteCreateReply:                {[]string{"pull-requests"}, true},
	RouteListReviewCommentReactions: {[]string{"pull-requests"}, false}, RouteCreateReviewCommentReaction: {[]string{"pull-requests"}, true},
	RouteListIssueComments: {[]string{"issues", "pull-requests"}, false}, RouteGetIssueComment: {[]string{"issues", "pull-requests"}, false},
	RouteCreateIssueComment: {[]string{"issues", "pull-requests"}, true}, RouteUpdateIssueComment: {[]string{"issues", "pull-requests"}, true},
	RouteListIssueCommentReactions: {[]string{"issues", "pull-requests"}, false}, RouteCreateIssueCommentReaction: {[]string{"issues", "pull-requests"}, true},
	RouteListArtifacts: {[]string{"actions"}, false}, RouteListRunArtifacts: {[]string{"actions"}, false},
	RouteGetWorkflowRun: {[]string{"actions"}, false}, RouteDownloadArtifact: {[]string{"actions"}, false},
	RouteGetPermission: {[]string{"metadata"}, false},
}

// permitted reports whether the scoped token tok may use route; ok is
// false when tok is not a scoped token.
func (s *Server) permitted(tok, route string) (allowed, ok bool) {
	s.mu.Lock()
	p, ok := s.scoped[tok]
	s.mu.Unlock()
	if !ok {
		return false, false
	}
	return p.allows(permissionFor[route]), true
}

func (p Permissions) allows(n need) bool {
	if slices.Contains(n.scopes, "metadata") {
		return true
	}
	return slices.ContainsFunc(n.scopes, func(scope string) bool {
		v := p[scope]
		return v == "write" || (v == "read" && !n.write)
	})
}

// scopedDenied answers 403 for a scoped token without the route's
// permission; it reports whether it did.
func (s *Server) scopedDenied(w http.ResponseWriter, r *http.Request, route string) bool {
	_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	allowed, scoped := s.permitted(tok, route)
	if !scoped || allowed {
		return false
	}
	s.errorJSON(w, r, http.StatusForbidden, MsgNoWriteAccess, nil, docsURL(route))
	return true
}

// gqlPermitted reports whether the token of auth may run a GraphQL
// operation: reading review threads needs pull-requests read;
// resolveReviewThread needs pull-requests and contents write. GitHub's
// permission tables do not list GraphQL mutations; that resolveReviewThread
// is refused ("Resource not accessible by integration") without contents:
// write is reported in github/gh-aw#35726 and oven-sh/bun#40468, each
// checked with both grants. The README's workflows ask for contents: read,
// so their warden replies in a fixed finding's thread instead.
func (s *Server) gqlPermitted(auth string, mutation bool) bool {
	_, tok, _ := strings.Cut(auth, " ")
	s.mu.Lock()
	p, ok := s.scoped[tok]
	s.mu.Unlock()
	if !ok {
		return true
	}
	if mutation {
		return p.allows(need{[]string{"pull-requests"}, true}) && p.allows(need{[]string{"contents"}, true})
	}
	return p.allows(need{[]string{"pull-requests"}, false})
}
