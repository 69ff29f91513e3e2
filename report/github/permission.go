package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	gh "github.com/google/go-github/v62/github"
)

// Permission returns login's permission on the repository, GitHub's
// legacy base role: "admin", "write" (also for maintain), "read" (also for
// triage) or "none". A server error is not retried: a caller that fails
// closed loses nothing by it but one run's dismissal.
func (c *Client) Permission(ctx context.Context, login string) (string, error) {
	op := "read the repository permission of " + login
	ctx = context.WithValue(ctx, noServerErrorRetry, true)
	// GitHub API docs: https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user
	p, _, err := c.gh.Repositories.GetPermissionLevel(ctx, c.owner, c.repo, login)
	if err != nil {
		return "", c.fail(op, false, err)
	}
	return p.GetPermission(), nil
}

// MaxPermissionLookups bounds the permission lookups of one run: a
// pull request with reactions from many logins costs at most this many
// requests. A login beyond it is not trusted.
const MaxPermissionLookups = 20

// loginRE is what GitHub allows as a user's login: alphanumerics and
// single hyphens, at most 39 characters. A bot's "name[bot]" does not
// match.
var loginRE = regexp.MustCompile(`^[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}$`)

// Maintainers decides whose word dismisses a finding on a public
// repository, where anyone may react or (as the pull request's author)
// resolve a thread: a login whose permission on the repository is write,
// maintain or admin, as GitHub answers it. Each login is looked up once a
// run, at most Max lookups a run; a login beyond them, a bot, and any
// failed lookup (404, 403 for a token that may not read permissions, a
// server error) are not trusted: it fails closed, with one line to Warn
// each time. After a failure other than 404 it looks nothing up again,
// since the next lookup would fail the same way. Not safe for concurrent
// use.
type Maintainers struct {
	Client *Client
	// Max is the lookups allowed; <= 0 means MaxPermissionLookups.
	Max int
	// Warn receives one line per problem; nil discards.
	Warn func(string)

	known   map[string]bool
	lookups int
	broken  string // why lookups stopped
	// Unchecked counts the logins not looked up because of Max or an
	// earlier failure: not trusted.
	Unchecked int
}

// Trusted reports whether login may dismiss warden's findings.
func (m *Maintainers) Trusted(ctx context.Context, login string) bool {
	if !loginRE.MatchString(login) || strings.EqualFold(login, "github-actions") {
		return false // a bot (or not a user's login): never
	}
	key := strings.ToLower(login) // logins are case-insensitive
	if ok, seen := m.known[key]; seen {
		return ok
	}
	if m.known == nil {
		m.known = map[string]bool{}
	}
	limit := m.Max
	if limit <= 0 {
		limit = MaxPermissionLookups
	}
	warn := m.Warn
	if warn == nil {
		warn = func(string) {}
	}
	switch {
	case m.broken != "":
		m.Unchecked++
		m.known[key] = false
		return false
	case m.lookups >= limit:
		if m.Unchecked == 0 {
			warn(fmt.Sprintf("more than %d logins reacted to or resolved warden's threads: the permission of %s and any further login is not looked up this run, and their thumbs-down or resolution does not dismiss a finding", limit, login))
		}
		m.Unchecked++
		m.known[key] = false
		return false
	}
	m.lookups++
	perm, err := m.Client.Permission(ctx, login)
	if err != nil {
		var er *gh.ErrorResponse
		if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound {
			warn(fmt.Sprintf("%v; %s's thumbs-down or resolution does not dismiss a finding", err, login))
		} else {
			m.broken = err.Error()
			warn(fmt.Sprintf("%v; no thumbs-down or resolution by %s or any login not yet checked dismisses a finding this run", err, login))
		}
		m.known[key] = false
		return false
	}
	ok := perm == "admin" || perm == "maintain" || perm == "write"
	m.known[key] = ok
	return ok
}
