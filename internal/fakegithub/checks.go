package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"
)

// CheckRun is the fake's state of one check run.
type CheckRun struct {
	ID                   int64
	Name, HeadSHA        string
	Status, Conclusion   string
	DetailsURL           string
	Title, Summary, Text string
	// Annotations holds every annotation received, appended request by
	// request as GitHub does.
	Annotations []Annotation
	// Updates counts the accepted update requests.
	Updates int
	// ExternalID is the integrator's reference; Actions the buttons the
	// check run shows (requested actions).
	ExternalID string
	Actions    []CheckRunAction
	// App is the slug of the GitHub App that created it: AppActions for
	// the workflow's own token (DefaultToken, DefaultReadOnlyToken, the
	// tokens of GrantToken), AppSlug for AppToken. Only that app may
	// update it (checksWriteDenied).
	App string
}

// CheckRunAction is a requested action: a button on the check run.
type CheckRunAction struct {
	Label       string `json:"label"`
	Description string `json:"description"`
	Identifier  string `json:"identifier"`
}

// Annotation is one check-run annotation.
type Annotation struct {
	Path            string `json:"path"`
	StartLine       int    `json:"start_line"`
	EndLine         int    `json:"end_line"`
	StartColumn     *int   `json:"start_column,omitempty"`
	EndColumn       *int   `json:"end_column,omitempty"`
	AnnotationLevel string `json:"annotation_level"`
	Message         string `json:"message"`
	Title           string `json:"title,omitempty"`
	RawDetails      string `json:"raw_details,omitempty"`
}

// The check-run enums GitHub accepts.
var (
	Statuses    = []string{"queued", "in_progress", "completed", "waiting", "requested", "pending"}
	Conclusions = []string{"action_required", "cancelled", "failure", "neutral", "success", "skipped", "timed_out"}
	levels      = []string{"notice", "warning", "failure"}
)

// CheckRuns returns copies of every check run, in creation order.
func (s *Server) CheckRuns() []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]CheckRun, len(s.checkRuns))
	for i, c := range s.checkRuns {
		out[i] = *c
		out[i].Annotations = slices.Clone(c.Annotations)
		out[i].Actions = slices.Clone(c.Actions)
	}
	return out
}

// CheckRun returns a copy of check run id.
func (s *Server) CheckRun(id int64) (CheckRun, bool) {
	for _, c := range s.CheckRuns() {
		if c.ID == id {
			return c, true
		}
	}
	return CheckRun{}, false
}

type checkRunBody struct {
	Name        *string           `json:"name"`
	HeadSHA     *string           `json:"head_sha"`
	DetailsURL  *string           `json:"details_url"`
	Status      *string           `json:"status"`
	Conclusion  *string           `json:"conclusion"`
	StartedAt   *string           `json:"started_at"`
	CompletedAt *string           `json:"completed_at"`
	Output      *checkRunOutput   `json:"output"`
	ExternalID  *string           `json:"external_id"`
	Actions     *[]CheckRunAction `json:"actions"`
}

type checkRunOutput struct {
	Title       *string      `json:"title"`
	Summary     *string      `json:"summary"`
	Text        *string      `json:"text"`
	Annotations []Annotation `json:"annotations"`
}

// validate returns GitHub's 422 text for what it rejects in a check-run
// body, "" when the body is fine. GitHub phrases these "Invalid
// request.\n\n..." (reviewdog: "Only 65535 characters are allowed; 250684
// were supplied"; qiniu/reviewbot#258: "No more than 50 items are allowed;
// 143 were supplied").
func (b *checkRunBody) validate(create bool) string {
	if create && (b.Name == nil || *b.Name == "") {
		return `"name" wasn't supplied.`
	}
	if create && (b.HeadSHA == nil || *b.HeadSHA == "") {
		return `"head_sha" wasn't supplied.`
	}
	if b.Status != nil && !slices.Contains(Statuses, *b.Status) {
		return fmt.Sprintf("%q is not a member of %q.", *b.Status, Statuses)
	}
	if b.Conclusion != nil && !slices.Contains(Conclusions, *b.Conclusion) {
		return fmt.Sprintf("%q is not a member of %q.", *b.Conclusion, Conclusions)
	}
	if b.Status != nil && *b.Status == "completed" && b.Conclusion == nil {
		return `"conclusion" wasn't supplied.`
	}
	if b.Actions != nil {
		if msg := validateActions(*b.Actions); msg != "" {
			return msg
		}
	}
	if b.Output != nil {
		return b.Output.validate()
	}
	return ""
}

// validateActions is GitHub's 422 text for requested actions it rejects:
// "A check run can have a maximum of three actions"; label "The maximum
// size is 20 characters", description "The maximum size is 40
// characters", identifier "The maximum size is 20 characters" (REST
// docs, "Create a check run", actions).
func validateActions(as []CheckRunAction) string {
	if len(as) > 3 {
		return fmt.Sprintf("No more than 3 items are allowed; %d were supplied.", len(as))
	}
	for i, a := range as {
		for _, f := range []struct {
			name, v string
			max     int
		}{{"label", a.Label, 20}, {"description", a.Description, 40}, {"identifier", a.Identifier, 20}} {
			if f.v == "" || utf8.RuneCountInString(f.v) > f.max {
				return fmt.Sprintf("actions[%d].%s must be 1 to %d characters; %d were supplied.", i, f.name, f.max, utf8.RuneCountInString(f.v))
			}
		}
	}
	return ""
}

// validate is GitHub's 422 text for what it rejects in a check run's
// output, "" when it is fine.
func (o *checkRunOutput) validate() string {
	if o.Title == nil {
		return `"title" wasn't supplied.`
	}
	if o.Summary == nil {
		return `"summary" wasn't supplied.`
	}
	for _, t := range []*string{o.Summary, o.Text} {
		if t != nil && utf8.RuneCountInString(*t) > MaxOutputText {
			return fmt.Sprintf("Only %d characters are allowed; %d were supplied.", MaxOutputText, utf8.RuneCountInString(*t))
		}
	}
	if len(o.Annotations) > MaxAnnotations {
		return fmt.Sprintf("No more than %d items are allowed; %d were supplied.", MaxAnnotations, len(o.Annotations))
	}
	for i, a := range o.Annotations {
		if msg := a.validate(i); msg != "" {
			return msg
		}
	}
	return ""
}

// validate is GitHub's 422 text for what it rejects in annotation i, ""
// when it is fine.
func (a Annotation) validate(i int) string {
	switch {
	case a.Path == "":
		return fmt.Sprintf(`"path" wasn't supplied for annotation %d.`, i)
	case a.StartLine < 1 || a.EndLine < a.StartLine:
		return fmt.Sprintf("annotation %d: start_line %d and end_line %d are not a range of lines.", i, a.StartLine, a.EndLine)
	case !slices.Contains(levels, a.AnnotationLevel):
		return fmt.Sprintf("%q is not a member of %q.", a.AnnotationLevel, levels)
	case a.Message == "":
		return fmt.Sprintf(`"message" wasn't supplied for annotation %d.`, i)
	case len(a.Message) > 64*1024 || len(a.RawDetails) > 64*1024:
		return fmt.Sprintf("annotation %d: message and raw_details may be at most 64 KB.", i)
	case utf8.RuneCountInString(a.Title) > 255:
		return fmt.Sprintf("annotation %d: title may be at most 255 characters.", i)
	case (a.StartColumn != nil || a.EndColumn != nil) && a.StartLine != a.EndLine:
		return fmt.Sprintf("annotation %d: start_column and end_column need start_line == end_line.", i)
	}
	return ""
}

func (s *Server) decodeCheckRun(w http.ResponseWriter, r *http.Request, route string, create bool) (*checkRunBody, bool) {
	var b checkRunBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		// A value of the wrong type is GitHub's 422; only JSON it
		// cannot parse is a 400.
		if s.specOK(w, r, route) {
			s.errorJSON(w, r, http.StatusBadRequest, "Problems parsing JSON", nil, docsURL(route))
		}
		return nil, false
	}
	if msg := b.validate(create); msg != "" {
		s.unprocessable(w, r, route, "Invalid request.\n\n"+msg)
		return nil, false
	}
	return &b, true
}

func (s *Server) createCheckRun(w http.ResponseWriter, r *http.Request) {
	b, ok := s.decodeCheckRun(w, r, RouteCreateCheckRun, true)
	if !ok {
		return
	}
	if !s.specOK(w, r, RouteCreateCheckRun) || s.checksWriteDenied(w, r, RouteCreateCheckRun, false, "") {
		return
	}
	app := s.appOf(r.Header.Get("Authorization"))
	s.mu.Lock()
	c := &CheckRun{ID: s.id(), Name: *b.Name, HeadSHA: *b.HeadSHA, Status: "queued", App: app}
	s.stamp(c.ID)
	c.apply(b)
	s.stampCompleted(c)
	s.checkRuns = append(s.checkRuns, c)
	out := s.checkRunJSON(c)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) updateCheckRun(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("check_run_id"), 10, 64)
	s.mu.Lock()
	i := slices.IndexFunc(s.checkRuns, func(c *CheckRun) bool { return c.ID == id })
	s.mu.Unlock()
	if i < 0 {
		s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, docsURL(RouteUpdateCheckRun))
		return
	}
	b, ok := s.decodeCheckRun(w, r, RouteUpdateCheckRun, false)
	if !ok || !s.specOK(w, r, RouteUpdateCheckRun) {
		return
	}
	s.mu.Lock()
	c := s.checkRuns[i]
	created := c.App
	s.mu.Unlock()
	if s.checksWriteDenied(w, r, RouteUpdateCheckRun, true, created) {
		return
	}
	s.mu.Lock()
	if b.Name != nil && *b.Name != "" {
		c.Name = *b.Name
	}
	c.apply(b)
	s.stampCompleted(c)
	c.Updates++
	out := s.checkRunJSON(c)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (c *CheckRun) apply(b *checkRunBody) {
	if b.Status != nil {
		c.Status = *b.Status
	}
	if b.Conclusion != nil {
		// "Providing conclusion will automatically set the status parameter
		// to completed."
		c.Conclusion, c.Status = *b.Conclusion, "completed"
	}
	if b.DetailsURL != nil {
		c.DetailsURL = *b.DetailsURL
	}
	if b.ExternalID != nil {
		c.ExternalID = *b.ExternalID
	}
	if b.Actions != nil {
		c.Actions = slices.Clone(*b.Actions)
	}
	if o := b.Output; o != nil {
		c.Title, c.Summary = *o.Title, *o.Summary
		if o.Text != nil {
			c.Text = *o.Text
		}
		c.Annotations = append(c.Annotations, o.Annotations...)
	}
}

func (s *Server) getCheckRun(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("check_run_id"), 10, 64)
	c, ok := s.CheckRun(id)
	if !ok {
		s.errorJSON(w, r, http.StatusNotFound, "Not Found", nil, "https://docs.github.com/rest/checks/runs#get-a-check-run")
		return
	}
	if !s.specOK(w, r, RouteGetCheckRun) {
		return
	}
	s.mu.Lock()
	out := s.checkRunJSON(&c)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// checkRunJSON is GitHub's check-run for c. Call with s.mu held.
// listCheckRuns lists the check runs on a commit (ref is a SHA here),
// newest first, filtered by check_name, as {"total_count", "check_runs"}.
func (s *Server) listCheckRuns(w http.ResponseWriter, r *http.Request) {
	if !s.specOK(w, r, RouteListCheckRuns) {
		return
	}
	ref, name := r.PathValue("ref"), r.URL.Query().Get("check_name")
	runs := []map[string]any{}
	all := s.CheckRuns()
	s.mu.Lock()
	for i := len(all) - 1; i >= 0; i-- {
		if c := all[i]; c.HeadSHA == ref && (name == "" || c.Name == name) {
			runs = append(runs, s.checkRunJSON(&c))
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(runs), "check_runs": runs})
}

func (s *Server) checkRunJSON(c *CheckRun) map[string]any {
	full := s.Owner + "/" + s.Repo
	t := s.times[c.ID]
	m := map[string]any{
		"id":           c.ID,
		"node_id":      nodeID("CR", c.ID),
		"name":         c.Name,
		"head_sha":     c.HeadSHA,
		"external_id":  c.ExternalID,
		"url":          fmt.Sprintf("%s/repos/%s/check-runs/%d", apiRoot, full, c.ID),
		"html_url":     fmt.Sprintf("%s/%s/runs/%d", htmlRoot, full, c.ID),
		"details_url":  fmt.Sprintf("%s/%s/runs/%d", htmlRoot, full, c.ID),
		"status":       c.Status,
		"conclusion":   nil,
		"started_at":   timestamp(t.created),
		"completed_at": nil,
		"output": map[string]any{
			"title":             nullable(c.Title),
			"summary":           nullable(c.Summary),
			"text":              nullable(c.Text),
			"annotations_count": len(c.Annotations),
			"annotations_url":   fmt.Sprintf("%s/repos/%s/check-runs/%d/annotations", apiRoot, full, c.ID),
		},
		"check_suite":   map[string]any{"id": stableID("check-suite:" + c.HeadSHA)},
		"app":           s.appJSON(c.App),
		"pull_requests": []any{},
	}
	if c.Conclusion != "" {
		m["conclusion"] = c.Conclusion
	}
	if c.Status == "completed" && !t.completed.IsZero() {
		m["completed_at"] = timestamp(t.completed)
	}
	if c.DetailsURL != "" {
		m["details_url"] = c.DetailsURL
	}
	return m
}

// nullable is nil for "", else s.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
