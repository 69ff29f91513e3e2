package github

import (
	"context"
	"errors"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v62/github"
)

// DefaultTokenLogin is the login GitHub Actions' GITHUB_TOKEN posts as.
const DefaultTokenLogin = "github-actions[bot]"

// Identity returns the login the token posts as, the only author whose
// comments carry warden's markers: Config.Login when set; else GitHub's
// answer to "Get the authenticated user" for a user's token (a personal
// access token); an installation token cannot ask ("Resource not
// accessible by integration", 403) and is taken to be GitHub Actions'
// GITHUB_TOKEN, which posts as DefaultTokenLogin. (A GitHub App's own
// installation token posts as "<app-slug>[bot]": set Config.Login.) An
// answer is kept for the Client's life; an error (a cancelled context, a
// server error) is returned and asked again next time, and markers then
// count from no one.
func (c *Client) Identity(ctx context.Context) (string, error) {
	c.identityMu.Lock()
	defer c.identityMu.Unlock()
	if c.login != "" {
		return c.login, nil
	}
	// GitHub API docs: https://docs.github.com/rest/users/users#get-the-authenticated-user
	u, _, err := c.gh.Users.Get(ctx, "")
	var er *gh.ErrorResponse
	switch {
	case err == nil && u.GetLogin() != "":
		c.login = u.GetLogin()
	case errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusForbidden:
		c.login = DefaultTokenLogin
	case err == nil:
		return "", errors.New("ask GitHub who the token is: no login in the answer")
	default:
		return "", c.fail("ask GitHub who the token is", false, err)
	}
	return c.login, nil
}

// Ours reports whether login is the one the token posts as (Identity):
// only such an author's comments and reactions carry warden's state. An
// error asking who the token is is returned; the caller then trusts no one.
func (c *Client) Ours(ctx context.Context, login string) (bool, error) {
	self, err := c.Identity(ctx)
	if err != nil {
		return false, err
	}
	return sameLogin(login, self), nil
}

// sameLogin reports whether two logins name the same account: GitHub's
// REST API writes a bot's login with "[bot]" ("github-actions[bot]"), its
// GraphQL API without ("github-actions"); logins are case-insensitive.
func sameLogin(a, b string) bool {
	a, b = strings.TrimSuffix(a, "[bot]"), strings.TrimSuffix(b, "[bot]")
	return a != "" && strings.EqualFold(a, b)
}
