package fakegithub

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"
)

// The JSON the fake answers with has every field GitHub's REST API
// description requires of it (checked on every answer: see
// checkResponse), with values derived from the fake's state: URLs under
// api.github.com and github.com, ids and node ids stable per name.

const (
	apiRoot  = "https://api.github.com"
	htmlRoot = "https://github.com"
)

// stableID is a positive id derived from name, the same on every call.
func stableID(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64()>>34) + 1
}

// nodeID is a GraphQL node id in GitHub's shape: a type prefix and an
// opaque base64 part.
func nodeID(prefix string, id int64) string {
	return prefix + "_" + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(id, 10)))
}

func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// userJSON is a simple-user: login and type ("User", "Bot" or
// "Organization").
func userJSON(login, typ string) map[string]any {
	u := apiRoot + "/users/" + login
	return map[string]any{
		"login": login, "id": stableID("user:" + login), "node_id": nodeID("U", stableID("user:"+login)),
		"avatar_url": "https://avatars.githubusercontent.com/u/" + strconv.FormatInt(stableID("user:"+login), 10) + "?v=4", "gravatar_id": "",
		"url": u, "html_url": htmlRoot + "/" + login,
		"followers_url": u + "/followers", "following_url": u + "/following{/other_user}",
		"gists_url": u + "/gists{/gist_id}", "starred_url": u + "/starred{/owner}{/repo}",
		"subscriptions_url": u + "/subscriptions", "organizations_url": u + "/orgs",
		"repos_url": u + "/repos", "events_url": u + "/events{/privacy}",
		"received_events_url": u + "/received_events",
		"type":                typ, "user_view_type": "public", "site_admin": false,
	}
}

// repoJSON is a repository named fullName ("owner/name"); fork says
// whether it is a fork.
func repoJSON(fullName string, fork bool, created time.Time) map[string]any {
	owner, name, _ := strings.Cut(fullName, "/")
	u := apiRoot + "/repos/" + fullName
	html := htmlRoot + "/" + fullName
	id := stableID("repo:" + fullName)
	ts := timestamp(created)
	return map[string]any{
		"id": id, "node_id": nodeID("R", id), "name": name, "full_name": fullName,
		"owner": userJSON(owner, "User"), "private": false, "html_url": html,
		"description": nil, "fork": fork, "url": u,
		"archive_url": u + "/{archive_format}{/ref}", "assignees_url": u + "/assignees{/user}",
		"blobs_url": u + "/git/blobs{/sha}", "branches_url": u + "/branches{/branch}",
		"collaborators_url": u + "/collaborators{/collaborator}", "comments_url": u + "/comments{/number}",
		"commits_url": u + "/commits{/sha}", "compare_url": u + "/compare/{base}...{head}",
		"contents_url": u + "/contents/{+path}", "contributors_url": u + "/contributors",
		"deployments_url": u + "/deployments", "downloads_url": u + "/downloads",
		"events_url": u + "/events", "forks_url": u + "/forks",
		"git_commits_url": u + "/git/commits{/sha}", "git_refs_url": u + "/git/refs{/sha}",
		"git_tags_url": u + "/git/tags{/sha}", "git_url": "git://github.com/" + fullName + ".git",
		"issue_comment_url": u + "/issues/comments{/number}", "issue_events_url": u + "/issues/events{/number}",
		"issues_url": u + "/issues{/number}", "keys_url": u + "/keys{/key_id}",
		"labels_url": u + "/labels{/name}", "languages_url": u + "/languages",
		"merges_url": u + "/merges", "milestones_url": u + "/milestones{/number}",
		"notifications_url": u + "/notifications{?since,all,participating}", "pulls_url": u + "/pulls{/number}",
		"releases_url": u + "/releases{/id}", "ssh_url": "git@github.com:" + fullName + ".git",
		"stargazers_url": u + "/stargazers", "statuses_url": u + "/statuses/{sha}",
		"subscribers_url": u + "/subscribers", "subscription_url": u + "/subscription",
		"tags_url": u + "/tags", "teams_url": u + "/teams", "trees_url": u + "/git/trees{/sha}",
		"clone_url": html + ".git", "mirror_url": nil, "hooks_url": u + "/hooks", "svn_url": html,
		"homepage": nil, "language": "Go", "forks_count": 0, "forks": 0,
		"stargazers_count": 0, "watchers_count": 0, "watchers": 0, "size": 1,
		"default_branch": "main", "open_issues_count": 1, "open_issues": 1,
		"is_template": false, "topics": []string{},
		"has_issues": true, "has_projects": true, "has_wiki": true, "has_pages": false,
		"has_downloads": true, "has_discussions": false, "archived": false, "disabled": false,
		"visibility": "public", "license": nil,
		"pushed_at": ts, "created_at": ts, "updated_at": ts,
	}
}

// fakeSHA is a commit-like hex SHA derived from s, for objects whose SHA
// the fake does not know (a file's blob).
func fakeSHA(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// diffHunk is GitHub's diff_hunk of a review comment on line of side in
// patch: the hunk's header and its lines up to and including the line;
// "" when the patch does not show the line.
func diffHunk(patch, side string, line int) string {
	var hunk []string
	oldLine, newLine := 0, 0
	for _, l := range strings.Split(patch, "\n") {
		if m := hunkRE.FindStringSubmatch(l); m != nil {
			hunk = []string{l}
			oldLine, _ = strconv.Atoi(m[1])
			newLine, _ = strconv.Atoi(m[3])
			continue
		}
		if hunk == nil {
			continue
		}
		hunk = append(hunk, l)
		var atOld, atNew int
		switch {
		case strings.HasPrefix(l, "-"):
			atOld, atNew = oldLine, -1
			oldLine++
		case strings.HasPrefix(l, "+"):
			atOld, atNew = -1, newLine
			newLine++
		case strings.HasPrefix(l, `\`):
			continue
		default:
			atOld, atNew = oldLine, newLine
			oldLine++
			newLine++
		}
		if (side == "LEFT" && atOld == line) || (side != "LEFT" && atNew == line) {
			return strings.Join(hunk, "\n")
		}
	}
	return ""
}

func link(href string) map[string]any { return map[string]any{"href": href} }

func pullURL(owner, repo string, n int) string {
	return fmt.Sprintf("%s/repos/%s/%s/pulls/%d", apiRoot, owner, repo, n)
}
