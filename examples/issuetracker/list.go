package main

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"
)

// ListIssues returns one page of matches as parallel arrays; an empty page
// encodes them as [], not null (ListIssuesResponse.MarshalJSON).
func (t *tracker) ListIssues(_ context.Context, req ListIssuesRequest) (*ListIssuesResponse, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	offset, err := decodeCursor(req)
	if err != nil {
		return nil, err
	}
	match, err := filter(req)
	if err != nil {
		return nil, err
	}
	var found []*issue
	for _, is := range t.issues {
		if match(is) {
			found = append(found, is)
		}
	}
	slices.SortFunc(found, order(req.Sort, req.Order))

	page := &ListIssuesResponse{TotalCount: len(found)}
	end := min(offset+req.Limit, len(found))
	for _, is := range found[min(offset, len(found)):end] {
		page.Numbers = append(page.Numbers, is.number)
		page.Titles = append(page.Titles, is.title)
		page.States = append(page.States, is.state())
	}
	if end < len(found) {
		page.NextCursor = new(encodeCursor(req, end))
	}
	return page, nil
}

// filter returns whether an issue matches every filter of req.
func filter(req ListIssuesRequest) (func(*issue) bool, error) {
	var since time.Time
	if req.UpdatedSince != nil {
		var err error
		if since, err = time.Parse(time.RFC3339, *req.UpdatedSince); err != nil {
			return nil, fmt.Errorf("updated_since: %v", err)
		}
	}
	words := strings.Fields(strings.ToLower(orZero(req.Text)))
	assignee, email := orZero(req.Assignee), orZero(req.AuthorEmail)
	return func(is *issue) bool {
		switch {
		case req.State != ListIssuesStateAll && string(req.State) != is.state(),
			!containsAll(is.labels, req.Labels),
			assignee == "none" && is.assignee != "",
			assignee != "" && assignee != "none" && assignee != is.assignee,
			email != "" && !strings.EqualFold(email, is.authorEmail),
			is.updatedAt.Before(since):
			return false
		}
		text := strings.ToLower(is.title + "\n" + is.body)
		for _, w := range words {
			if !strings.Contains(text, w) {
				return false
			}
		}
		return true
	}, nil
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// order compares issues by the sort key, in the requested direction, with
// the issue number breaking ties. Priority 1 is the most urgent, so
// descending priority puts it first.
func order(sort ListIssuesSort, dir ListIssuesOrder) func(a, b *issue) int {
	return func(a, b *issue) int {
		var c int
		switch sort {
		case ListIssuesSortCreated:
			c = a.createdAt.Compare(b.createdAt)
		case ListIssuesSortPriority:
			c = cmp.Compare(b.priority, a.priority)
		default: // updated
			c = a.updatedAt.Compare(b.updatedAt)
		}
		c = cmp.Or(c, cmp.Compare(a.number, b.number))
		if dir == ListIssuesOrderAsc {
			return c
		}
		return -c
	}
}

// A cursor holds the offset of the next page and a hash of the filters that
// produced it, so that a cursor used with other filters is refused rather
// than silently skipping issues.
type cursor struct {
	Offset  int    `json:"o"`
	Filters uint64 `json:"f"`
}

func filtersHash(req ListIssuesRequest) uint64 {
	req.Cursor, req.Limit = nil, 0
	b, _ := json.Marshal(req)
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

func encodeCursor(req ListIssuesRequest, offset int) string {
	b, _ := json.Marshal(cursor{Offset: offset, Filters: filtersHash(req)})
	return base64.RawURLEncoding.EncodeToString(b)
}

var errCursor = errors.New("cursor is not a next_cursor from list_issues; omit it to start from the first page")

func decodeCursor(req ListIssuesRequest) (int, error) {
	if req.Cursor == nil {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(*req.Cursor)
	if err != nil {
		return 0, errCursor
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.Offset < 0 {
		return 0, errCursor
	}
	if c.Filters != filtersHash(req) {
		return 0, errors.New("cursor was made with other filters; use the same filters as the call that returned it, or omit it")
	}
	return c.Offset, nil
}
