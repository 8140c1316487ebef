package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// baseURL is the tracker's web interface, for the links in results.
const baseURL = "https://tracker.example.com"

// The user the tools act as: the author of the issues and comments they
// create.
const (
	me      = "assistant"
	myEmail = "assistant@example.com"
)

// knownLabels are the labels that exist in the tracker; create_issue and
// update_issue accept no others.
var knownLabels = []string{
	"area:api", "area:auth", "area:reports", "area:ui",
	"bug", "docs", "feature", "milestone:2.5", "regression", "security",
}

// tracker is an in-memory issue tracker, seeded with a few issues. It
// lives as long as the plugin process: a restart forgets every change.
type tracker struct {
	mu       sync.Mutex
	now      func() time.Time
	ids      *rand.Rand // comment IDs, deterministic per process
	issues   map[int]*issue
	next     int            // the number of the next issue
	tokens   map[string]int // client_token → issue number
	comments map[string]*comment
}

type issue struct {
	number              int
	title, body         string
	closed              bool
	closeReason         string
	labels              []string // sorted
	assignee            string   // "" when unassigned
	priority            int
	dueDate             string
	estimateHours       float64
	author, authorEmail string
	comments            []*comment // oldest first
	checklist           []task
	metadata            json.RawMessage // a JSON object, or nil
	createdAt           time.Time
	updatedAt           time.Time
	closedAt            time.Time
}

// task is one item of an issue's checklist.
type task struct {
	text string
	done bool
}

type comment struct {
	id        string
	issue     int
	author    string
	body      string
	replyTo   string
	createdAt time.Time
}

func (is *issue) state() string {
	if is.closed {
		return "closed"
	}
	return "open"
}

func issueURL(n int) string { return fmt.Sprintf("%s/issues/%d", baseURL, n) }

// newTracker returns a tracker seeded with issues 1040 to 1044, whose clock
// is now.
func newTracker(now func() time.Time) *tracker {
	t := &tracker{
		now:      now,
		ids:      rand.New(rand.NewPCG(1, 2)),
		issues:   map[int]*issue{},
		tokens:   map[string]int{},
		comments: map[string]*comment{},
	}
	day := func(d, h int) time.Time { return time.Date(2025, time.February, d, h, 0, 0, 0, time.UTC) }
	for _, is := range []*issue{
		{number: 1040, title: "Dark mode for the settings page", body: "The settings page ignores the dark theme.",
			labels: []string{"area:ui", "feature"}, priority: 4, author: "mona", authorEmail: "mona@example.com",
			createdAt: day(3, 9), updatedAt: day(3, 9)},
		{number: 1041, title: "Export to CSV drops the last row", body: "Exporting a report with 10 rows gives a file with 9.",
			labels: []string{"area:reports", "bug"}, assignee: "dev-ops-bot", priority: 2, author: "hubot", authorEmail: "hubot@example.com",
			closed: true, closeReason: "completed", createdAt: day(4, 10), updatedAt: day(6, 16), closedAt: day(6, 16)},
		{number: 1042, title: "Login page rejects passwords that contain a space", body: "Steps: set a password with a space, log out, log in.",
			labels: []string{"area:auth", "bug"}, assignee: "mona", priority: 2, author: "hubot", authorEmail: "hubot@example.com",
			createdAt: day(5, 11), updatedAt: day(7, 14)},
		{number: 1043, title: "Passwords with a trailing space fail to log in", body: "Since 2.4.1 I cannot log in.",
			labels: []string{"area:auth", "bug"}, priority: 3, author: "octocat", authorEmail: "octocat@example.com",
			createdAt: day(8, 8), updatedAt: day(8, 8)},
		{number: 1044, title: "Document the retry policy of the API client", body: "",
			labels: []string{"area:api", "docs"}, assignee: "dev-ops-bot", priority: 3, author: "mona", authorEmail: "mona@example.com",
			createdAt: day(9, 15), updatedAt: day(9, 15)},
	} {
		t.issues[is.number] = is
	}
	t.next = 1045
	for _, c := range []*comment{
		{id: "0b8e5f3c-6a1d-4a53-9a55-2f8f1d1e7c11", issue: 1042, author: "mona", body: "Reproduced on 2.4.1; the space is stripped before hashing.", createdAt: day(6, 9)},
		{id: "6f9d2b1e-3c4a-4e8f-9b7d-1a2c3e4f5a6b", issue: 1042, author: "hubot", body: "The stripping happens in the login form only.", replyTo: "0b8e5f3c-6a1d-4a53-9a55-2f8f1d1e7c11", createdAt: day(7, 14)},
	} {
		t.comments[c.id] = c
		t.issues[c.issue].comments = append(t.issues[c.issue].comments, c)
	}
	return t
}

// clock returns the current time, in UTC and whole seconds, as the
// tracker stores it.
func (t *tracker) clock() time.Time { return t.now().UTC().Truncate(time.Second) }

// issue returns issue n, or a tool error message.
func (t *tracker) issue(n int) (*issue, error) {
	if is := t.issues[n]; is != nil {
		return is, nil
	}
	return nil, fmt.Errorf("there is no issue #%d; find issues with list_issues", n)
}

// checkLabels refuses labels that do not exist in the tracker.
func checkLabels(labels []string) error {
	for _, l := range labels {
		if !slices.Contains(knownLabels, l) {
			return fmt.Errorf("label %q does not exist; the tracker has %s", l, strings.Join(knownLabels, ", "))
		}
	}
	return nil
}

func sortedLabels(labels []string) []string {
	out := append([]string{}, labels...)
	slices.Sort(out)
	return slices.Compact(out)
}

// addComment posts a comment by me on is.
func (t *tracker) addComment(is *issue, body, replyTo string) *comment {
	c := &comment{id: t.newID(), issue: is.number, author: me, body: body, replyTo: replyTo, createdAt: t.clock()}
	t.comments[c.id] = c
	is.comments = append(is.comments, c)
	is.updatedAt = c.createdAt
	return c
}

// newID returns a random (version 4) UUID from the tracker's seeded source.
func (t *tracker) newID() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(t.ids.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
