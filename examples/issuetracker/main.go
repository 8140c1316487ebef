// Command issuetracker is the handler plugin of the issue-tracker contract.
//
// It keeps its issues in memory, seeded with issues 1040 to 1044, so it
// needs no network or database; every change is lost when the plugin
// stops. The runtime has validated the arguments and applied the contract's
// defaults before a handler runs.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/toolc/toolc/plugins"
)

func main() {
	plugins.Serve(newTracker(time.Now).handlers()...)
}

// handlers returns a handler per tool of the contract, keyed by function
// name: create_issue is the one MCP clients call tracker_create_issue.
func (t *tracker) handlers() []plugins.Handler {
	return []plugins.Handler{
		plugins.Handle("create_issue", locked(t, (*tracker).createIssue)),
		plugins.Handle("get_issue", locked(t, (*tracker).getIssue)),
		plugins.Handle("list_issues", locked(t, (*tracker).listIssues)),
		plugins.Handle("update_issue", locked(t, (*tracker).updateIssue)),
		plugins.Handle("close_issue", locked(t, (*tracker).closeIssue)),
		plugins.Handle("reopen_issue", locked(t, (*tracker).reopenIssue)),
		plugins.Handle("assign_issue", locked(t, (*tracker).assignIssue)),
		plugins.Handle("add_comment", locked(t, (*tracker).addCommentTool)),
		plugins.Handle("list_comments", locked(t, (*tracker).listComments)),
		plugins.Handle("delete_comment", locked(t, (*tracker).deleteComment)),
	}
}

// locked adapts a tracker method into a handler function that holds the
// tracker's lock. A method returns the result, or an error that the model
// should read: it becomes a tool error.
func locked[Req any](t *tracker, m func(*tracker, Req) (*plugins.Result, error)) func(context.Context, Req) (*plugins.Result, error) {
	return func(_ context.Context, req Req) (*plugins.Result, error) {
		t.mu.Lock()
		defer t.mu.Unlock()
		res, err := m(t, req)
		if err != nil {
			return plugins.Errorf("%v", err), nil
		}
		return res, nil
	}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

type createRequest struct {
	Title         string   `json:"title"`
	Body          string   `json:"body"`
	Labels        []string `json:"labels"`
	Assignee      string   `json:"assignee"`
	Priority      int      `json:"priority"`
	DueDate       string   `json:"due_date"`
	EstimateHours float64  `json:"estimate_hours"`
	ClientToken   string   `json:"client_token"`
}

type created struct {
	Number    int    `json:"number"`
	URL       string `json:"url"`
	CreatedAt string `json:"created_at"`
}

func (t *tracker) createIssue(req createRequest) (*plugins.Result, error) {
	if n, ok := t.tokens[req.ClientToken]; ok && req.ClientToken != "" {
		is := t.issues[n]
		return plugins.JSON(created{Number: n, URL: issueURL(n), CreatedAt: stamp(is.createdAt)})
	}
	if err := checkLabels(req.Labels); err != nil {
		return nil, err
	}
	now := t.clock()
	is := &issue{
		number: t.next, title: req.Title, body: req.Body, labels: sortedLabels(req.Labels),
		assignee: req.Assignee, priority: req.Priority, dueDate: req.DueDate, estimateHours: req.EstimateHours,
		author: me, authorEmail: myEmail, createdAt: now, updatedAt: now,
	}
	t.issues[is.number] = is
	t.next++
	if req.ClientToken != "" {
		t.tokens[req.ClientToken] = is.number
	}
	return plugins.JSON(created{Number: is.number, URL: issueURL(is.number), CreatedAt: stamp(now)})
}

type numberRequest struct {
	Number int `json:"number"`
}

// issueView is the response of get_issue; the omitempty fields are the
// optional ones.
type issueView struct {
	Number       int      `json:"number"`
	Title        string   `json:"title"`
	Body         string   `json:"body"`
	State        string   `json:"state"`
	CloseReason  string   `json:"close_reason,omitempty"`
	Labels       []string `json:"labels"`
	Assignee     string   `json:"assignee,omitempty"`
	Priority     int      `json:"priority"`
	CommentCount int      `json:"comment_count"`
	CreatedAt    string   `json:"created_at"`
	UpdatedAt    string   `json:"updated_at"`
}

func (t *tracker) getIssue(req numberRequest) (*plugins.Result, error) {
	is, err := t.issue(req.Number)
	if err != nil {
		return nil, err
	}
	return plugins.JSON(issueView{
		Number: is.number, Title: is.title, Body: is.body, State: is.state(), CloseReason: is.closeReason,
		Labels: append([]string{}, is.labels...), Assignee: is.assignee, Priority: is.priority,
		CommentCount: len(is.comments), CreatedAt: stamp(is.createdAt), UpdatedAt: stamp(is.updatedAt),
	})
}

// updateRequest has pointers where an absent field (no change) differs
// from an empty one (clear it). milestone, deprecated since 2.0, is not
// decoded: it is ignored.
type updateRequest struct {
	Number   int       `json:"number"`
	Title    *string   `json:"title"`
	Body     *string   `json:"body"`
	Labels   *[]string `json:"labels"`
	Assignee *string   `json:"assignee"`
	Priority *int      `json:"priority"`
	DueDate  *string   `json:"due_date"`
}

type updated struct {
	UpdatedAt string `json:"updated_at"`
}

func (t *tracker) updateIssue(req updateRequest) (*plugins.Result, error) {
	is, err := t.issue(req.Number)
	if err != nil {
		return nil, err
	}
	if req.Labels != nil {
		if err := checkLabels(*req.Labels); err != nil {
			return nil, err
		}
	}
	changed := false
	set := func(dst *string, v *string) {
		if v != nil {
			*dst, changed = *v, true
		}
	}
	set(&is.title, req.Title)
	set(&is.body, req.Body)
	set(&is.assignee, req.Assignee)
	set(&is.dueDate, req.DueDate)
	if req.Labels != nil {
		is.labels, changed = sortedLabels(*req.Labels), true
	}
	if req.Priority != nil {
		is.priority, changed = *req.Priority, true
	}
	if changed {
		is.updatedAt = t.clock()
	}
	return plugins.JSON(updated{UpdatedAt: stamp(is.updatedAt)})
}

type closeRequest struct {
	Number      int    `json:"number"`
	Reason      string `json:"reason"`
	DuplicateOf int    `json:"duplicate_of"`
	Comment     string `json:"comment"`
}

type closed struct {
	ClosedAt string `json:"closed_at"`
}

func (t *tracker) closeIssue(req closeRequest) (*plugins.Result, error) {
	is, err := t.issue(req.Number)
	if err != nil {
		return nil, err
	}
	if req.Reason == "duplicate" {
		switch {
		case req.DuplicateOf == 0:
			return nil, fmt.Errorf("reason duplicate needs duplicate_of, the number of the issue that #%d duplicates", req.Number)
		case req.DuplicateOf == req.Number:
			return nil, fmt.Errorf("issue #%d cannot duplicate itself", req.Number)
		}
		if _, err := t.issue(req.DuplicateOf); err != nil {
			return nil, err
		}
	}
	if req.Comment != "" {
		t.addComment(is, req.Comment, "")
	}
	now := t.clock()
	if !is.closed {
		is.closed, is.closedAt = true, now
	}
	is.closeReason, is.updatedAt = req.Reason, now
	return plugins.JSON(closed{ClosedAt: stamp(is.closedAt)})
}

func (t *tracker) reopenIssue(req numberRequest) (*plugins.Result, error) {
	is, err := t.issue(req.Number)
	if err != nil {
		return nil, err
	}
	if !is.closed {
		return plugins.Text(fmt.Sprintf("Issue #%d is already open.", is.number)), nil
	}
	is.closed, is.closeReason, is.closedAt, is.updatedAt = false, "", time.Time{}, t.clock()
	return plugins.Text(fmt.Sprintf("Reopened issue #%d.", is.number)), nil
}

type assignRequest struct {
	Number   int    `json:"number"`
	Assignee string `json:"assignee"`
}

func (t *tracker) assignIssue(req assignRequest) (*plugins.Result, error) {
	is, err := t.issue(req.Number)
	if err != nil {
		return nil, err
	}
	is.assignee, is.updatedAt = req.Assignee, t.clock()
	return plugins.Text(fmt.Sprintf("Assigned issue #%d to %s. (assign_issue is deprecated: use update_issue with assignee.)", is.number, req.Assignee)), nil
}
