package main

import (
	"context"
	"fmt"
	"time"
)

func (t *tracker) AddComment(_ context.Context, req AddCommentRequest) (*AddCommentResponse, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	is, err := t.issue(req.Number)
	if err != nil {
		return nil, err
	}
	replyTo := orZero(req.ReplyTo)
	if replyTo != "" {
		if parent := t.comments[replyTo]; parent == nil || parent.issue != is.number {
			return nil, fmt.Errorf("issue #%d has no comment %s to reply to; see list_comments", is.number, replyTo)
		}
	}
	c := t.addComment(is, req.Body, replyTo)
	return &AddCommentResponse{ID: c.id, URL: fmt.Sprintf("%s#comment-%s", issueURL(is.number), c.id), CreatedAt: stamp(c.createdAt)}, nil
}

// ListComments returns the page as parallel arrays; an empty page encodes
// them as [], not null (ListCommentsResponse.MarshalJSON).
func (t *tracker) ListComments(_ context.Context, req ListCommentsRequest) (*ListCommentsResponse, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	is, err := t.issue(req.Number)
	if err != nil {
		return nil, err
	}
	var since time.Time
	if req.Since != nil {
		if since, err = time.Parse(time.RFC3339, *req.Since); err != nil {
			return nil, fmt.Errorf("since: %v", err)
		}
	}
	page := &ListCommentsResponse{}
	for _, c := range is.comments {
		if c.createdAt.Before(since) {
			continue
		}
		if len(page.IDs) == req.Limit {
			page.HasMore = true
			break
		}
		page.IDs = append(page.IDs, c.id)
		page.Authors = append(page.Authors, c.author)
		page.Bodies = append(page.Bodies, c.body)
		page.CreatedAt = append(page.CreatedAt, stamp(c.createdAt))
	}
	return page, nil
}

func (t *tracker) DeleteComment(_ context.Context, req DeleteCommentRequest) (*DeleteCommentResponse, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.comments[req.ID]
	if c == nil {
		return &DeleteCommentResponse{Deleted: false}, nil
	}
	delete(t.comments, c.id)
	is := t.issues[c.issue]
	for i, x := range is.comments {
		if x == c {
			is.comments = append(is.comments[:i], is.comments[i+1:]...)
			break
		}
	}
	is.updatedAt = t.clock()
	return &DeleteCommentResponse{Deleted: true}, nil
}
