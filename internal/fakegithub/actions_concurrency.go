package fakegithub

import (
	"cmp"
	"strings"
)

// Concurrency groups, as GitHub documents them ("Control the concurrency
// of workflows and jobs",
// https://docs.github.com/actions/how-tos/writing-workflows/choosing-what-your-workflow-does/control-the-concurrency-of-workflows-and-jobs):
// "there can be at most one running and one pending job in a concurrency
// group at any time. When a concurrent job or workflow is queued, if
// another job or workflow using the same concurrency group in the
// repository is in progress, the queued job or workflow will be pending.
// Any existing pending job or workflow in the same concurrency group, if
// it exists, will be canceled and the new queued job or workflow will take
// its place. To also cancel any currently running job or workflow in the
// same concurrency group, specify cancel-in-progress: true." And "The
// concurrency group name is case insensitive." Of a burst of runs queued
// while one runs, only the first and the last run.
//
// The fake takes the group as GitHub evaluated it for the run's event
// (the expression is the workflow's; a test evaluates it); a run without
// a group starts at once, as every run did before.

// Concurrency is a workflow's concurrency: block for one run: its group
// evaluated ("" is none) and cancel-in-progress.
type Concurrency struct {
	Group            string
	CancelInProgress bool
}

// QueueRun is the run's event arriving: GitHub records run r (assigning
// its ID) and starts it at once, or under its concurrency group's rule
// holds it pending (cancelling the run pending before it) or cancels the
// group's running run first (cancel-in-progress). A started run's job
// waits for a runner: NextJob. It returns the run as recorded. An unknown
// cache-mode panics.
func (s *Server) QueueRun(r WorkflowRun) WorkflowRun {
	s.cacheAccessOf(r) // panics on an unknown cache-mode, before the lock
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.ID == 0 {
		r.ID = 100000 + s.id()
	}
	r.Attempt = max(r.Attempt, 1)
	r.Actor = cmp.Or(r.Actor, "octocat")
	r.Ref = s.RunRef(r)
	s.actions.runNumber++
	s.stamp(r.ID)
	run := &r
	s.actions.runs = append(s.actions.runs, run)
	if g := r.Concurrency.Group; g != "" {
		for _, o := range s.actions.runs {
			if o == run || !strings.EqualFold(o.Concurrency.Group, g) {
				continue
			}
			switch {
			case o.Status == "pending":
				s.cancelRun(o) // the new run takes its place
			case o.Status == "in_progress" && r.Concurrency.CancelInProgress:
				s.cancelRun(o)
			}
		}
		if s.groupRunning(g) {
			run.Status = "pending"
			return *run
		}
	}
	run.Status = cmp.Or(run.Status, "in_progress")
	s.startJob(run)
	return *run
}

// NextJob takes the job of the earliest run that GitHub started and no
// runner took yet, as a runner picks up a job; ok is false when there is
// none.
func (s *Server) NextJob() (job *Job, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.actions.started) == 0 {
		return nil, false
	}
	job = s.actions.started[0]
	s.actions.started = s.actions.started[1:]
	return job, true
}

// Cancelled is closed when GitHub cancels the job's run
// (cancel-in-progress); the runner then stops the job.
func (j *Job) Cancelled() <-chan struct{} { return j.cancelled }

// groupRunning reports whether a run of group g is in progress. Call
// with s.mu held.
func (s *Server) groupRunning(g string) bool {
	for _, o := range s.actions.runs {
		if o.Status == "in_progress" && strings.EqualFold(o.Concurrency.Group, g) {
			return true
		}
	}
	return false
}

// cancelRun completes run r as cancelled: a pending run never starts; a
// running one's job is told (Cancelled), and one no runner took yet is
// not picked up. Call with s.mu held.
func (s *Server) cancelRun(r *WorkflowRun) {
	r.Status, r.Conclusion = "completed", "cancelled"
	for _, j := range s.actions.jobs {
		if j.Run.ID == r.ID && j.cancelled != nil {
			select {
			case <-j.cancelled:
			default:
				close(j.cancelled)
			}
		}
	}
	kept := s.actions.started[:0]
	for _, j := range s.actions.started {
		if j.Run.ID != r.ID {
			kept = append(kept, j)
		}
	}
	s.actions.started = kept
}

// startPending starts each group's pending run whose group no longer has
// one in progress. Call with s.mu held.
func (s *Server) startPending() {
	for _, r := range s.actions.runs {
		if r.Status == "pending" && !s.groupRunning(r.Concurrency.Group) {
			r.Status = "in_progress"
			s.startJob(r)
		}
	}
}
