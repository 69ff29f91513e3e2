package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	gh "github.com/google/go-github/v62/github"
)

// Access is a login's standing on the repository, as "Get repository
// permissions for a user" answers it.
type Access struct {
	// Permission is GitHub's legacy base role: "admin", "write" (also
	// for maintain), "read" (also for triage) or "none".
	Permission string
	// Role is the role's own name: "admin", "maintain", "write",
	// "triage", "read", "none", or an organization's custom role; the
	// replies quote it ("@x has triage").
	Role string
}

// Writes reports whether the access may push to the repository: the
// write, maintain and admin roles (and custom roles built on them), which
// GitHub's legacy permission answers as write or admin. It is the one
// rule of whose word counts: a thumbs-down, a resolution, the Resume
// review button and the /warden commands that act.
func (a Access) Writes() bool { return a.Permission == "admin" || a.Permission == "write" }

// Permission returns login's access to the repository. A server error is
// not retried: a caller that fails closed loses nothing by it but one
// run's dismissal or command.
func (c *Client) Permission(ctx context.Context, login string) (Access, error) {
	op := "read the repository permission of " + login
	ctx = context.WithValue(ctx, noServerErrorRetry, true)
	// go-github v62's RepositoryPermissionLevel has no role_name, which
	// GitHub's schema requires ("repository-collaborator-permission").
	// GitHub API docs: https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user
	u := fmt.Sprintf("repos/%s/%s/collaborators/%s/permission", url.PathEscape(c.owner), url.PathEscape(c.repo), url.PathEscape(login))
	req, err := c.gh.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return Access{}, c.fail(op, false, err)
	}
	var p struct {
		Permission string `json:"permission"`
		RoleName   string `json:"role_name"`
	}
	if _, err := c.gh.Do(ctx, req, &p); err != nil {
		return Access{}, c.fail(op, false, err)
	}
	return Access{Permission: p.Permission, Role: cmp.Or(p.RoleName, p.Permission)}, nil
}

// MaxPermissionLookups bounds the permission lookups of one run: a
// pull request with reactions from many logins costs at most this many
// requests. A login beyond it is not trusted.
const MaxPermissionLookups = 20

// loginRE is what GitHub allows as a user's login: alphanumerics and
// single hyphens, at most 39 characters. A bot's "name[bot]" does not
// match.
var loginRE = regexp.MustCompile(`^[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}$`)

// Maintainers decides whose word counts where anyone may speak: on a
// public repository anyone may react, comment `/warden ...` or (as the
// pull request's author) resolve a thread, so only a login whose access
// Writes, as GitHub answers it, dismisses a finding, presses Resume
// review or runs a command that acts. Each login is looked up once a run,
// at most Max lookups a run; a login beyond them, a bot, and any failed
// lookup (404, 403 for a token that may not read permissions, a server
// error) are not trusted: it fails closed, with one line to Warn each
// time. After a failure other than 404 it looks nothing up again, since
// the next lookup would fail the same way. Not safe for concurrent use.
type Maintainers struct {
	Client *Client
	// Max is the lookups allowed; <= 0 means MaxPermissionLookups.
	Max int
	// Warn receives one line per problem; nil discards.
	Warn func(string)

	known   map[string]lookup
	lookups int
	broken  string // why lookups stopped
	// Unchecked counts the logins not looked up because of Max or an
	// earlier failure: not trusted.
	Unchecked int
}

// lookup is what Access answered for one login.
type lookup struct {
	access Access
	err    error
}

// Trusted reports whether login may dismiss warden's findings: Access
// answers for it, and that access Writes.
func (m *Maintainers) Trusted(ctx context.Context, login string) bool {
	a, err := m.Access(ctx, login)
	return err == nil && a.Writes()
}

// Access returns login's access to the repository, under Maintainers'
// rules: a bot, a string that is no login, a login past Max or after a
// failed lookup, and a failed lookup are an error (the caller must not
// trust the login), which Warn is told about as Trusted's callers need
// it. The answer for a login is kept for the run, an error too.
func (m *Maintainers) Access(ctx context.Context, login string) (Access, error) {
	if !loginRE.MatchString(login) || strings.EqualFold(login, "github-actions") {
		return Access{}, fmt.Errorf("%q is not a person's login", login) // a bot (or not a user's login): never
	}
	key := strings.ToLower(login) // logins are case-insensitive
	if l, seen := m.known[key]; seen {
		return l.access, l.err
	}
	if m.known == nil {
		m.known = map[string]lookup{}
	}
	limit := m.Max
	if limit <= 0 {
		limit = MaxPermissionLookups
	}
	warn := m.Warn
	if warn == nil {
		warn = func(string) {}
	}
	var l lookup
	switch {
	case m.broken != "":
		m.Unchecked++
		l.err = fmt.Errorf("the permission of %s was not looked up: an earlier lookup this run failed (%s)", login, m.broken)
	case m.lookups >= limit:
		if m.Unchecked == 0 {
			warn(fmt.Sprintf("more than %d logins reacted to or resolved warden's threads: the permission of %s and any further login is not looked up this run, and their thumbs-down or resolution does not dismiss a finding", limit, login))
		}
		m.Unchecked++
		l.err = fmt.Errorf("the permission of %s was not looked up: more than %d logins this run", login, limit)
	default:
		m.lookups++
		l.access, l.err = m.Client.Permission(ctx, login)
		var er *gh.ErrorResponse
		switch {
		case l.err == nil:
		case errors.As(l.err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound:
			warn(fmt.Sprintf("%v; %s's thumbs-down or resolution does not dismiss a finding", l.err, login))
		default:
			m.broken = l.err.Error()
			warn(fmt.Sprintf("%v; no thumbs-down or resolution by %s or any login not yet checked dismisses a finding this run", l.err, login))
		}
	}
	m.known[key] = l
	return l.access, l.err
}
