package fakegithub

import (
	"net/http"
	"time"
)

// GitHub's secondary limits on content-creating requests, which the fake
// enforces when Server.ContentLimits is set: "No more than 80
// content-generating requests per minute and no more than 500
// content-generating requests per hour are allowed"
// (rate-limits-for-the-rest-api.md, about secondary rate limits).
const (
	ContentPerMinute = 80
	ContentPerHour   = 500
)

// contentCreating are the routes that create content: a comment, a
// review, a reply or a reaction (GraphQL mutations count too: see
// graphql.go).
var contentCreating = map[string]bool{
	RouteCreateReview: true, RouteCreateReply: true, RouteCreateIssueComment: true,
	RouteCreateIssueCommentReaction: true, RouteCreateReviewCommentReaction: true,
}

// overContentLimit records a content-creating request at now and reports
// whether it is over GitHub's secondary limits; a request over them is
// answered 403 and not counted again. Call with s.mu not held.
func (s *Server) overContentLimit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ContentLimits {
		return false
	}
	now := s.now()
	var minute, hour int
	for _, t := range s.contentTimes {
		if t.After(now.Add(-time.Hour)) {
			hour++
			if t.After(now.Add(-time.Minute)) {
				minute++
			}
		}
	}
	if minute >= ContentPerMinute || hour >= ContentPerHour {
		s.contentRefused++
		return true
	}
	s.contentTimes = append(s.contentTimes, now)
	return false
}

// ContentCreated returns when each content-creating request the fake
// accepted arrived, and how many it refused over the secondary limits.
func (s *Server) ContentCreated() (times []time.Time, refused int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.contentTimes...), s.contentRefused
}

// secondaryLimited answers GitHub's 403 for a secondary rate limit.
func (s *Server) secondaryLimited(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", "60")
	s.errorJSON(w, r, http.StatusForbidden,
		"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", nil,
		"https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits")
}
