package main

import (
	"fmt"
	"time"

	"github.com/toolc/toolc/plugins"
)

type commentRequest struct {
	Number  int    `json:"number"`
	Body    string `json:"body"`
	ReplyTo string `json:"reply_to"`
}

type posted struct {
	ID        string `json:"id"`
	URL       string `json:"url"`
	CreatedAt string `json:"created_at"`
}

func (t *tracker) addCommentTool(req commentRequest) (*plugins.Result, error) {
	is, err := t.issue(req.Number)
	if err != nil {
		return nil, err
	}
	if req.ReplyTo != "" {
		if parent := t.comments[req.ReplyTo]; parent == nil || parent.issue != is.number {
			return nil, fmt.Errorf("issue #%d has no comment %s to reply to; see list_comments", is.number, req.ReplyTo)
		}
	}
	c := t.addComment(is, req.Body, req.ReplyTo)
	return plugins.JSON(posted{ID: c.id, URL: fmt.Sprintf("%s#comment-%s", issueURL(is.number), c.id), CreatedAt: stamp(c.createdAt)})
}

type listCommentsRequest struct {
	Number int    `json:"number"`
	Since  string `json:"since"`
	Limit  int    `json:"limit"`
}

// commentPage is the response of list_comments: parallel arrays, never
// null.
type commentPage struct {
	IDs       []string `json:"ids"`
	Authors   []string `json:"authors"`
	Bodies    []string `json:"bodies"`
	CreatedAt []string `json:"created_at"`
	HasMore   bool     `json:"has_more"`
}

func (t *tracker) listComments(req listCommentsRequest) (*plugins.Result, error) {
	is, err := t.issue(req.Number)
	if err != nil {
		return nil, err
	}
	var since time.Time
	if req.Since != "" {
		if since, err = time.Parse(time.RFC3339, req.Since); err != nil {
			return nil, fmt.Errorf("since: %v", err)
		}
	}
	page := commentPage{IDs: []string{}, Authors: []string{}, Bodies: []string{}, CreatedAt: []string{}}
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
	return plugins.JSON(page)
}

type deleteRequest struct {
	ID string `json:"id"`
}

type deletion struct {
	Deleted bool `json:"deleted"`
}

func (t *tracker) deleteComment(req deleteRequest) (*plugins.Result, error) {
	c := t.comments[req.ID]
	if c == nil {
		return plugins.JSON(deletion{Deleted: false})
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
	return plugins.JSON(deletion{Deleted: true})
}
