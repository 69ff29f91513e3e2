package fakegithub

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestConcurrencyGroups: GitHub's pending-job rule. In a group at most
// one run is in progress and one pending; a newly queued run cancels the
// pending one and takes its place; with cancel-in-progress the running
// one is cancelled too (its job told); a completed run starts the pending
// one. Group names are case-insensitive; runs without a group, or in
// another group, start at once.
func TestConcurrencyGroups(t *testing.T) {
	t.Parallel()
	queue, keep := Concurrency{Group: "warden-commands-7"}, Concurrency{Group: "warden-commands-7", CancelInProgress: true}
	for _, tt := range []struct {
		name string
		// steps: "q<n>" queues run n under its group, "c<n>" completes
		// run n (success), "j" takes the next job and records its run.
		steps  []string
		groups map[int]Concurrency
		want   []string // every run's status/conclusion, in order
		jobs   []int    // the runs whose jobs a runner took
	}{
		{"a burst of five: only the first and the last run", []string{"q1", "q2", "q3", "q4", "q5", "j", "c1", "j", "c5"},
			map[int]Concurrency{1: queue, 2: queue, 3: queue, 4: queue, 5: queue},
			[]string{"completed/success", "completed/cancelled", "completed/cancelled", "completed/cancelled", "completed/success"}, []int{1, 5}},
		{"cancel-in-progress: the newest cancels the running and the pending", []string{"q1", "j", "q2", "q3", "j", "c3"},
			map[int]Concurrency{1: keep, 2: keep, 3: keep},
			[]string{"completed/cancelled", "completed/cancelled", "completed/success"}, []int{1, 3}},
		{"one pending waits for the running one", []string{"q1", "q2", "j"},
			map[int]Concurrency{1: queue, 2: queue},
			[]string{"in_progress/", "pending/"}, []int{1}},
		{"group names are case-insensitive", []string{"q1", "q2", "q3", "j"},
			map[int]Concurrency{1: queue, 2: {Group: "WARDEN-commands-7"}, 3: queue},
			[]string{"in_progress/", "completed/cancelled", "pending/"}, []int{1}},
		{"no group, or a group each: every run starts", []string{"q1", "q2", "q3", "j", "j", "j"},
			map[int]Concurrency{2: {Group: "c-2"}, 3: {Group: "c-3"}},
			[]string{"in_progress/", "in_progress/", "in_progress/"}, []int{1, 2, 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := New("o", "r")
			ids := map[int]int64{}
			var jobs []int
			var taken []*Job
			for _, st := range tt.steps {
				var n int
				fmt.Sscanf(st[1:], "%d", &n)
				switch st[0] {
				case 'q':
					ids[n] = s.QueueRun(WorkflowRun{Name: "warden commands", Event: "issue_comment", Concurrency: tt.groups[n]}).ID
				case 'c':
					s.CompleteRun(ids[n], "success")
				case 'j':
					j, ok := s.NextJob()
					if !ok {
						t.Fatalf("step %s: no job started", st)
					}
					taken = append(taken, j)
					for k, id := range ids {
						if id == j.Run.ID {
							jobs = append(jobs, k)
						}
					}
				}
			}
			var got []string
			for _, r := range s.Runs() {
				got = append(got, r.Status+"/"+r.Conclusion)
			}
			if !slices.Equal(got, tt.want) || !slices.Equal(jobs, tt.jobs) {
				t.Errorf("%s: runs %q, jobs of runs %v; want %q, %v", strings.Join(tt.steps, " "), got, jobs, tt.want, tt.jobs)
			}
			for _, j := range taken {
				r, _ := s.run(j.Run.ID)
				select {
				case <-j.Cancelled():
					if r.Conclusion != "cancelled" {
						t.Errorf("run %d's job was told it was cancelled; the run is %s/%s", r.ID, r.Status, r.Conclusion)
					}
				default:
					if r.Conclusion == "cancelled" {
						t.Errorf("run %d was cancelled while running, and its job was not told", r.ID)
					}
				}
			}
			if j, ok := s.NextJob(); ok {
				t.Errorf("a job no step took: run %d", j.Run.ID)
			}
		})
	}
}

// TestStartRunRefusesPending: StartRun is for a run that starts at once;
// a run its group holds pending cannot be started by it.
func TestStartRunRefusesPending(t *testing.T) {
	t.Parallel()
	s := New("o", "r")
	g := Concurrency{Group: "g"}
	if j := s.StartRun(WorkflowRun{Concurrency: g}); j.Run.Status != "in_progress" || j.RuntimeToken == "" {
		t.Fatalf("StartRun of the group's first run = %+v, want it in progress with a token", j.Run)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("StartRun of a run its group holds pending did not panic")
		}
	}()
	s.StartRun(WorkflowRun{Concurrency: g})
}
