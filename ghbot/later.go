package ghbot

import (
	"context"
	"fmt"
	"time"

	gh "github.com/google/go-github/v62/github"

	ghreport "github.com/org/warden/report/github"
)

// ConversationComment is a comment in a pull request's conversation as
// GitHub says it is.
type ConversationComment struct {
	ID                 int64
	Body               string
	Author, AuthorType string // login; "User" or "Bot"
	Association        string // author_association
	URL                string // html_url
	Created            time.Time
}

// maxLaterPages bounds LaterComments' reads: pages of 100.
const maxLaterPages = 10

// LaterComments lists the conversation comments of pull request pr
// written after comment id (GitHub's comment ids grow with time), oldest
// first. It reads at most maxLaterPages pages of 100 from the start; a
// pull request with more comments than that is read in its first ones
// only.
func LaterComments(ctx context.Context, c *ghreport.Client, pr int, id int64) ([]ConversationComment, error) {
	client, owner, repo := c.REST()
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	var out []ConversationComment
	for range maxLaterPages {
		// GitHub API docs: https://docs.github.com/rest/issues/comments#list-issue-comments
		cs, resp, err := client.Issues.ListComments(ctx, owner, repo, pr, opts)
		if err != nil {
			return nil, c.Fail(fmt.Sprintf("list the comments of pull request #%d", pr), false, err)
		}
		for _, ic := range cs {
			if ic.GetID() <= id {
				continue
			}
			out = append(out, ConversationComment{
				ID: ic.GetID(), Body: ic.GetBody(), Author: ic.GetUser().GetLogin(), AuthorType: ic.GetUser().GetType(),
				Association: ic.GetAuthorAssociation(), URL: ic.GetHTMLURL(), Created: ic.GetCreatedAt().Time,
			})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}
