// Command issuetracker is the handler plugin of the issue-tracker contract.
//
// It keeps its issues in memory, seeded with issues 1040 to 1044, so it
// needs no network or database; every change is lost when the plugin
// stops. The runtime has validated the arguments and applied the contract's
// defaults before a handler runs.
package main

//go:generate go run ../../cmd/toolc gen go .

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/toolc/toolc/plugins"
)

func main() {
	Serve(newTracker(time.Now))
}

// The tracker's exported methods implement the contract's tools (Tools, in
// tools_gen.go). Each holds the tracker's lock while it runs; an error it
// returns is a tool error, for the model to read.

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// orZero returns *p, or the zero value when p is nil: the caller left the
// field out.
func orZero[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// nonZero returns a pointer to v, or nil when v is the zero value, for an
// optional response field that is absent rather than empty.
func nonZero[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// CreateIssue opens an issue. MCP clients call it tracker_create_issue,
// the name its contract pins.
func (t *tracker) CreateIssue(_ context.Context, req CreateIssueRequest) (*CreateIssueResponse, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if req.ClientToken != nil {
		if n, ok := t.tokens[*req.ClientToken]; ok {
			return &CreateIssueResponse{Number: n, URL: issueURL(n), CreatedAt: stamp(t.issues[n].createdAt)}, nil
		}
	}
	if err := checkLabels(req.Labels); err != nil {
		return nil, err
	}
	now := t.clock()
	is := &issue{
		number: t.next, title: req.Title, body: orZero(req.Body), labels: sortedLabels(req.Labels),
		assignee: orZero(req.Assignee), priority: int(req.Priority), dueDate: orZero(req.DueDate), estimateHours: orZero(req.EstimateHours),
		author: me, authorEmail: myEmail, createdAt: now, updatedAt: now,
	}
	// The runtime has checked metadata, an object (and parsed it back
	// from a string that held it), and every item of the checklist, and
	// filled in done's default.
	is.metadata = req.Metadata
	for _, item := range req.Checklist {
		is.checklist = append(is.checklist, task{text: item.Text, done: item.Done})
	}
	t.issues[is.number] = is
	t.next++
	if req.ClientToken != nil {
		t.tokens[*req.ClientToken] = is.number
	}
	return &CreateIssueResponse{Number: is.number, URL: issueURL(is.number), CreatedAt: stamp(now)}, nil
}

func (t *tracker) GetIssue(_ context.Context, req GetIssueRequest) (*GetIssueResponse, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	is, err := t.issue(req.Number)
	if err != nil {
		return nil, err
	}
	resp := &GetIssueResponse{
		Number: is.number, Title: is.title, Body: is.body, State: GetIssueState(is.state()),
		CloseReason: nonZero(GetIssueCloseReason(is.closeReason)), Labels: slices.Clone(is.labels),
		Assignee: nonZero(is.assignee), Priority: GetIssuePriority(is.priority), CommentCount: len(is.comments),
		CreatedAt: stamp(is.createdAt), UpdatedAt: stamp(is.updatedAt), Metadata: is.metadata,
	}
	for _, task := range is.checklist {
		resp.Checklist = append(resp.Checklist, GetIssueChecklistItem{Text: task.text, Done: task.done})
	}
	return resp, nil
}

// UpdateIssue changes the fields that the caller gave: a nil field is left
// out, so it keeps its value, while an empty one clears it. milestone,
// deprecated since 2.0, is ignored.
func (t *tracker) UpdateIssue(_ context.Context, req UpdateIssueRequest) (*UpdateIssueResponse, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	is, err := t.issue(req.Number)
	if err != nil {
		return nil, err
	}
	if err := checkLabels(req.Labels); err != nil {
		return nil, err
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
		is.labels, changed = sortedLabels(req.Labels), true
	}
	if req.Priority != nil {
		is.priority, changed = int(*req.Priority), true
	}
	if changed {
		is.updatedAt = t.clock()
	}
	return &UpdateIssueResponse{UpdatedAt: stamp(is.updatedAt)}, nil
}

func (t *tracker) CloseIssue(_ context.Context, req CloseIssueRequest) (*CloseIssueResponse, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	is, err := t.issue(req.Number)
	if err != nil {
		return nil, err
	}
	if req.Reason == CloseIssueReasonDuplicate {
		switch {
		case req.DuplicateOf == nil:
			return nil, fmt.Errorf("reason duplicate needs duplicate_of, the number of the issue that #%d duplicates", req.Number)
		case *req.DuplicateOf == req.Number:
			return nil, fmt.Errorf("issue #%d cannot duplicate itself", req.Number)
		}
		if _, err := t.issue(*req.DuplicateOf); err != nil {
			return nil, err
		}
	}
	if req.Comment != nil {
		t.addComment(is, *req.Comment, "")
	}
	now := t.clock()
	if !is.closed {
		is.closed, is.closedAt = true, now
	}
	is.closeReason, is.updatedAt = string(req.Reason), now
	return &CloseIssueResponse{ClosedAt: stamp(is.closedAt)}, nil
}

func (t *tracker) ReopenIssue(_ context.Context, req ReopenIssueRequest) (*plugins.Result, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
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

func (t *tracker) AssignIssue(_ context.Context, req AssignIssueRequest) (*plugins.Result, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	is, err := t.issue(req.Number)
	if err != nil {
		return nil, err
	}
	is.assignee, is.updatedAt = req.Assignee, t.clock()
	return plugins.Text(fmt.Sprintf("Assigned issue #%d to %s. (assign_issue is deprecated: use update_issue with assignee.)", is.number, req.Assignee)), nil
}
