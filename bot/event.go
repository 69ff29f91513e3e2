package bot

import (
	"encoding/json"
	"fmt"
)

// The events that carry commands.
const (
	EventIssueComment       = "issue_comment"
	EventReviewComment      = "pull_request_review_comment"
	maxEventBytes           = 25 << 20 // GitHub caps webhook payloads at 25 MB
	eventPayloadHasNoNumber = "the payload names no pull request"
)

// Event is a comment event, as far as commands need it.
type Event struct {
	Comment Comment
	// PullRequest is the pull request's number; 0 when the comment is on
	// an issue.
	PullRequest int
	// CommentID is the comment's id (for reactions and replies);
	// ReviewComment says whether it is a review comment (reactions and
	// replies then go to the pulls API, else to the issues API).
	CommentID     int64
	ReviewComment bool
	// HeadRepo is the full name of the pull request's head repository,
	// for a review comment (its payload carries the pull request); ""
	// for a conversation comment or a deleted fork.
	HeadRepo string
}

// ParseEvent reads an issue_comment or pull_request_review_comment
// payload. Anything else, or a payload without the comment's fields, is an
// error naming the problem.
func ParseEvent(name string, payload []byte) (Event, error) {
	if name != EventIssueComment && name != EventReviewComment {
		return Event{}, fmt.Errorf("event %q carries no command (want %s or %s)", name, EventIssueComment, EventReviewComment)
	}
	if len(payload) > maxEventBytes {
		return Event{}, fmt.Errorf("%s event: payload of %d bytes is over GitHub's 25 MB", name, len(payload))
	}
	var p struct {
		Action  string `json:"action"`
		Comment *struct {
			ID                int64  `json:"id"`
			Body              string `json:"body"`
			AuthorAssociation string `json:"author_association"`
			InReplyToID       int64  `json:"in_reply_to_id"`
			User              struct {
				Login string `json:"login"`
				Type  string `json:"type"`
			} `json:"user"`
		} `json:"comment"`
		Issue *struct {
			Number      int              `json:"number"`
			PullRequest *json.RawMessage `json:"pull_request"`
			User        struct {
				Login string `json:"login"`
			} `json:"user"`
		} `json:"issue"`
		PullRequest *struct {
			Number int `json:"number"`
			User   struct {
				Login string `json:"login"`
			} `json:"user"`
			Head struct {
				Repo *struct {
					FullName string `json:"full_name"`
				} `json:"repo"`
			} `json:"head"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return Event{}, fmt.Errorf("%s event: %w", name, err)
	}
	if p.Comment == nil || p.Comment.ID == 0 {
		return Event{}, fmt.Errorf("%s event: no comment in the payload", name)
	}
	ev := Event{CommentID: p.Comment.ID}
	ev.Comment = Comment{
		Body: p.Comment.Body, Author: p.Comment.User.Login, AuthorType: p.Comment.User.Type,
		Association: p.Comment.AuthorAssociation, Action: p.Action, ReplyTo: p.Comment.InReplyToID,
	}
	switch name {
	case EventIssueComment:
		if p.Issue == nil || p.Issue.Number <= 0 {
			return Event{}, fmt.Errorf("%s event: %s", name, eventPayloadHasNoNumber)
		}
		if p.Issue.PullRequest != nil && string(*p.Issue.PullRequest) != "null" {
			ev.PullRequest = p.Issue.Number
			ev.Comment.OnPullRequest = true
			ev.Comment.PullRequestAuthor = p.Issue.User.Login // a pull request's issue is opened by its author
		}
	case EventReviewComment:
		if p.PullRequest == nil || p.PullRequest.Number <= 0 {
			return Event{}, fmt.Errorf("%s event: %s", name, eventPayloadHasNoNumber)
		}
		ev.PullRequest, ev.ReviewComment, ev.Comment.OnPullRequest = p.PullRequest.Number, true, true
		ev.Comment.PullRequestAuthor = p.PullRequest.User.Login
		if r := p.PullRequest.Head.Repo; r != nil {
			ev.HeadRepo = r.FullName
		}
	}
	return ev, nil
}
