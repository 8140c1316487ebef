package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolc/toolc/runtime"
)

// testClock starts at 2025-03-01 12:00 UTC and moves a minute on each
// reading.
func testClock() func() time.Time {
	t := time.Date(2025, time.March, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Minute)
		return t
	}
}

func newServer(t *testing.T) *runtime.Runtime {
	return serve(t, Handlers(newTracker(testClock()))...)
}

// ok calls a tool that must succeed and returns its structured content,
// or nil for a tool without response fields.
func ok(t *testing.T, rt *runtime.Runtime, tool, args string) map[string]any {
	t.Helper()
	res, _ := call(t, rt, tool, args)
	if res.IsError {
		t.Fatalf("%s %s: tool error %q", tool, args, res.Content[0].Text)
	}
	if res.StructuredContent == nil {
		return nil
	}
	var out map[string]any
	if err := json.Unmarshal(res.StructuredContent.(json.RawMessage), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// fails calls a tool that must return a tool error that contains want.
func fails(t *testing.T, rt *runtime.Runtime, tool, args, want string) {
	t.Helper()
	res, _ := call(t, rt, tool, args)
	if !res.IsError || !strings.Contains(res.Content[0].Text, want) {
		t.Errorf("%s %s: %+v, want a tool error containing %q", tool, args, res.Content, want)
	}
}

func numbers(page map[string]any) string {
	return fmt.Sprint(page["numbers"])
}

func TestGetIssue(t *testing.T) {
	rt := newServer(t)
	got := ok(t, rt, "get_issue", `{"number":1042}`)
	want := map[string]any{
		"number": 1042.0, "title": "Login page rejects passwords that contain a space",
		"body": "Steps: set a password with a space, log out, log in.", "state": "open",
		"labels": []any{"area:auth", "bug"}, "assignee": "mona", "priority": 2.0, "comment_count": 2.0,
		"created_at": "2025-02-05T11:00:00Z", "updated_at": "2025-02-07T14:00:00Z", "checklist": []any{},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("issue 1042:\n got %v\nwant %v", got, want)
	}
	closed := ok(t, rt, "get_issue", `{"number":1041}`)
	if closed["state"] != "closed" || closed["close_reason"] != "completed" {
		t.Errorf("issue 1041: %v, want closed as completed", closed)
	}
	if _, ok := ok(t, rt, "get_issue", `{"number":1040}`)["assignee"]; ok {
		t.Errorf("unassigned issue 1040 has an assignee field")
	}
	fails(t, rt, "get_issue", `{"number":9999}`, "there is no issue #9999")
	fails(t, rt, "get_issue", `{"number":0}`, "number") // below the contract's minimum
}

func TestCreateIssue(t *testing.T) {
	rt := newServer(t)
	got := ok(t, rt, "create_issue", `{"title":"Crash on empty report","labels":["bug","area:reports"],"due_date":"2025-03-31","estimate_hours":4}`)
	if got["number"] != 1045.0 || got["url"] != "https://tracker.example.com/issues/1045" || got["created_at"] != "2025-03-01T12:01:00Z" {
		t.Errorf("created %v", got)
	}
	is := ok(t, rt, "get_issue", `{"number":1045}`)
	if is["state"] != "open" || is["priority"] != 3.0 || fmt.Sprint(is["labels"]) != "[area:reports bug]" || is["body"] != "" || is["comment_count"] != 0.0 {
		t.Errorf("new issue %v: want open, the default priority 3, sorted labels, no body, no comments", is)
	}

	// The MCP name works as well as the function name.
	const token = `"client_token":"9b2f6a1c-2d3e-4f50-8a6b-7c8d9e0f1a2b"`
	first := ok(t, rt, "tracker_create_issue", `{"title":"Retry me",`+token+`}`)
	again := ok(t, rt, "tracker_create_issue", `{"title":"Retry me",`+token+`}`)
	if first["number"] != 1046.0 || fmt.Sprint(again) != fmt.Sprint(first) {
		t.Errorf("a retry with the same client_token gave %v, then %v; want issue 1046 twice", first, again)
	}
	if next := ok(t, rt, "create_issue", `{"title":"Another"}`); next["number"] != 1047.0 {
		t.Errorf("next issue %v, want 1047", next["number"])
	}

	fails(t, rt, "create_issue", `{"title":"x","labels":["wontfix"]}`, `label "wontfix" does not exist`)
	fails(t, rt, "create_issue", `{"title":"`+strings.Repeat("x", 201)+`"}`, "title")
	fails(t, rt, "create_issue", `{"title":"x","priority":5}`, "priority")
	fails(t, rt, "create_issue", `{"title":"x","labels":["bug","bug"]}`, "labels")
}

// TestChecklist sends a record, the checklist: the runtime checks each
// item and fills in done's default before the handler stores it, and
// get_issue returns the items.
func TestChecklist(t *testing.T) {
	rt := newServer(t)
	ok(t, rt, "create_issue", `{"title":"Fix export","checklist":[{"text":"Find the bug"},{"text":"Add a test","done":true},{"text":"Ship it","done":null}]}`)
	is := ok(t, rt, "get_issue", `{"number":1045}`)
	if got, want := fmt.Sprint(is["checklist"]), "[map[done:false text:Find the bug] map[done:true text:Add a test] map[done:false text:Ship it]]"; got != want {
		t.Errorf("checklist %s, want %s", got, want)
	}
	fails(t, rt, "create_issue", `{"title":"x","checklist":[{"text":""}]}`, `item at index 0 of field "checklist": field "text" must be at least 1 character long, not 0`)
	fails(t, rt, "create_issue", `{"title":"x","checklist":[{"text":"a"},{"txt":"b"}]}`, `item at index 1 of field "checklist": unknown field "txt"; did you mean "text"?`)
	fails(t, rt, "create_issue", `{"title":"x","checklist":["a task"]}`, `item at index 0 of field "checklist" must be an object, not the string "a task"`)
}

// TestMetadata sends a free-form object, as a value and as a string that
// holds it, as a strict projection sends it: the handler gets the object
// either way, and get_issue returns it.
func TestMetadata(t *testing.T) {
	rt := newServer(t)
	ok(t, rt, "create_issue", `{"title":"a","metadata":{"jira_key":"OPS-12","customer":{"id":42}}}`)
	ok(t, rt, "create_issue", `{"title":"b","metadata":"{\"jira_key\": \"OPS-13\"}"}`)
	ok(t, rt, "create_issue", `{"title":"c","metadata":null}`)
	for n, want := range map[int]string{1045: "map[customer:map[id:42] jira_key:OPS-12]", 1046: "map[jira_key:OPS-13]", 1047: "<nil>"} {
		if got := fmt.Sprint(ok(t, rt, "get_issue", fmt.Sprintf(`{"number":%d}`, n))["metadata"]); got != want {
			t.Errorf("issue %d: metadata %s, want %s", n, got, want)
		}
	}
	fails(t, rt, "create_issue", `{"title":"x","metadata":["OPS-12"]}`, `field "metadata" must be a JSON object, or a string that holds one, not an array`)
	fails(t, rt, "create_issue", `{"title":"x","metadata":"OPS-12"}`, `field "metadata" must be a JSON object, or a string that holds one, not the string "OPS-12"`)
}

func TestListIssues(t *testing.T) {
	rt := newServer(t)
	for _, tc := range []struct{ args, want string }{
		{`{}`, "[1044 1043 1042 1040]"}, // open, last updated first
		{`{"order":"asc"}`, "[1040 1042 1043 1044]"},
		{`{"sort":"created","state":"closed"}`, "[1041]"},
		{`{"state":"all","labels":["bug"],"sort":"priority","limit":10}`, "[1042 1041 1043]"},
		{`{"state":"all","sort":"priority","order":"asc"}`, "[1040 1043 1044 1041 1042]"},
		{`{"assignee":"mona","updated_since":"2025-01-31T09:00:00Z"}`, "[1042]"},
		{`{"assignee":"none"}`, "[1043 1040]"},
		{`{"author_email":"MONA@example.com"}`, "[1044 1040]"},
		{`{"text":"export CSV","state":"all"}`, "[1041]"},
		{`{"text":"SPACE log"}`, "[1043 1042]"},
		{`{"updated_since":"2025-02-08T09:00:00+01:00"}`, "[1044 1043]"},
		{`{"labels":[]}`, "[1044 1043 1042 1040]"},
		{`{"labels":["security"]}`, "[]"},
	} {
		page := ok(t, rt, "list_issues", tc.args)
		if got := numbers(page); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.args, got, tc.want)
		}
		if n := len(page["numbers"].([]any)); len(page["titles"].([]any)) != n || len(page["states"].([]any)) != n || page["total_count"] != float64(n) {
			t.Errorf("%s: arrays and total_count disagree: %v", tc.args, page)
		}
	}
	fails(t, rt, "list_issues", `{"assignee":"@mona"}`, "assignee")
	fails(t, rt, "list_issues", `{"text":"x"}`, "text")
}

func TestListIssuesPages(t *testing.T) {
	rt := newServer(t)
	first := ok(t, rt, "list_issues", `{"state":"all","limit":2}`)
	if numbers(first) != "[1044 1043]" || first["total_count"] != 5.0 {
		t.Fatalf("first page %v", first)
	}
	cursor := first["next_cursor"].(string)
	second := ok(t, rt, "list_issues", `{"state":"all","limit":2,"cursor":"`+cursor+`"}`)
	if numbers(second) != "[1042 1041]" {
		t.Errorf("second page %v", second)
	}
	// The limit may change from page to page; the filters may not.
	last := ok(t, rt, "list_issues", `{"state":"all","limit":5,"cursor":"`+second["next_cursor"].(string)+`"}`)
	if numbers(last) != "[1040]" {
		t.Errorf("last page %v", last)
	}
	if _, ok := last["next_cursor"]; ok {
		t.Errorf("the last page has a next_cursor: %v", last)
	}
	fails(t, rt, "list_issues", `{"state":"open","cursor":"`+cursor+`"}`, "other filters")
	fails(t, rt, "list_issues", `{"cursor":"not-a-cursor"}`, "not a next_cursor")
}

func TestUpdateIssue(t *testing.T) {
	rt := newServer(t)
	got := ok(t, rt, "update_issue", `{"number":1042,"labels":["regression","bug","area:auth"],"assignee":"","body":"","priority":1,"milestone":"2.5"}`)
	if got["updated_at"] != "2025-03-01T12:01:00Z" {
		t.Errorf("updated_at %v", got["updated_at"])
	}
	is := ok(t, rt, "get_issue", `{"number":1042}`)
	if fmt.Sprint(is["labels"]) != "[area:auth bug regression]" || is["body"] != "" || is["priority"] != 1.0 || is["updated_at"] != got["updated_at"] {
		t.Errorf("after the update: %v", is)
	}
	if _, ok := is["assignee"]; ok {
		t.Errorf("assignee %q, want none after assigning the empty string", is["assignee"])
	}
	if same := ok(t, rt, "update_issue", `{"number":1042}`); same["updated_at"] != got["updated_at"] {
		t.Errorf("an update that changes nothing moved updated_at to %v", same["updated_at"])
	}
	if again := ok(t, rt, "update_issue", `{"number":1042,"title":"Passwords with spaces are rejected"}`); again["updated_at"] == got["updated_at"] {
		t.Errorf("a title change did not move updated_at")
	}
	if is := ok(t, rt, "get_issue", `{"number":1042}`); is["title"] != "Passwords with spaces are rejected" || is["priority"] != 1.0 {
		t.Errorf("the title changed and the rest was kept? %v", is)
	}
	fails(t, rt, "update_issue", `{"number":1042,"labels":["nope"]}`, `label "nope" does not exist`)
	fails(t, rt, "update_issue", `{"number":7,"title":"x"}`, "there is no issue #7")
}

func TestCloseAndReopen(t *testing.T) {
	rt := newServer(t)
	fails(t, rt, "close_issue", `{"number":1043,"reason":"duplicate"}`, "needs duplicate_of")
	fails(t, rt, "close_issue", `{"number":1043,"reason":"duplicate","duplicate_of":1043}`, "cannot duplicate itself")
	fails(t, rt, "close_issue", `{"number":1043,"reason":"duplicate","duplicate_of":5}`, "there is no issue #5")

	got := ok(t, rt, "close_issue", `{"number":1043,"reason":"duplicate","duplicate_of":1042,"comment":"Same as #1042."}`)
	is := ok(t, rt, "get_issue", `{"number":1043}`)
	if is["state"] != "closed" || is["close_reason"] != "duplicate" || is["comment_count"] != 1.0 {
		t.Errorf("closed as duplicate with a comment: %v", is)
	}
	// Closing again only updates the reason.
	again := ok(t, rt, "close_issue", `{"number":1043}`)
	if again["closed_at"] != got["closed_at"] {
		t.Errorf("closed_at moved from %v to %v", got["closed_at"], again["closed_at"])
	}
	if is := ok(t, rt, "get_issue", `{"number":1043}`); is["close_reason"] != "completed" {
		t.Errorf("close_reason %v, want the default completed", is["close_reason"])
	}

	res, _ := call(t, rt, "reopen_issue", `{"number":1043}`)
	if res.IsError || res.Content[0].Text != "Reopened issue #1043." {
		t.Errorf("reopen: %+v", res.Content)
	}
	is = ok(t, rt, "get_issue", `{"number":1043}`)
	if _, ok := is["close_reason"]; ok || is["state"] != "open" {
		t.Errorf("reopened issue %v", is)
	}
	if res, _ := call(t, rt, "reopen_issue", `{"number":1043}`); res.IsError || res.Content[0].Text != "Issue #1043 is already open." {
		t.Errorf("reopening an open issue: %+v", res.Content)
	}
}

func TestAssignIssue(t *testing.T) {
	rt := newServer(t)
	ok(t, rt, "assign_issue", `{"number":1040,"assignee":"dev-ops-bot"}`)
	if is := ok(t, rt, "get_issue", `{"number":1040}`); is["assignee"] != "dev-ops-bot" {
		t.Errorf("assignee %v", is["assignee"])
	}
	fails(t, rt, "assign_issue", `{"number":1040,"assignee":""}`, "assignee")
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestComments(t *testing.T) {
	rt := newServer(t)
	const first = "0b8e5f3c-6a1d-4a53-9a55-2f8f1d1e7c11"
	c := ok(t, rt, "add_comment", `{"number":1042,"body":"Fixed in #1050.","reply_to":"`+first+`"}`)
	id, _ := c["id"].(string)
	if !uuidRE.MatchString(id) || c["url"] != "https://tracker.example.com/issues/1042#comment-"+id || c["created_at"] != "2025-03-01T12:01:00Z" {
		t.Errorf("new comment %v", c)
	}
	all := ok(t, rt, "list_comments", `{"number":1042}`)
	if fmt.Sprint(all["authors"]) != "[mona hubot assistant]" || all["has_more"] != false || all["ids"].([]any)[2] != id {
		t.Errorf("comments %v", all)
	}
	one := ok(t, rt, "list_comments", `{"number":1042,"limit":1}`)
	if fmt.Sprint(one["ids"]) != "["+first+"]" || one["has_more"] != true {
		t.Errorf("limit 1: %v", one)
	}
	recent := ok(t, rt, "list_comments", `{"number":1042,"since":"2025-02-07T14:00:00Z"}`)
	if len(recent["ids"].([]any)) != 2 {
		t.Errorf("since the second comment: %v", recent)
	}
	if none := ok(t, rt, "list_comments", `{"number":1040}`); fmt.Sprint(none) != "map[authors:[] bodies:[] created_at:[] has_more:false ids:[]]" {
		t.Errorf("no comments: %v", none)
	}

	fails(t, rt, "add_comment", `{"number":1040,"body":"x","reply_to":"`+first+`"}`, "issue #1040 has no comment")
	fails(t, rt, "add_comment", `{"number":1042,"body":""}`, "body")
	fails(t, rt, "add_comment", `{"number":1042,"body":"x","reply_to":"not-a-uuid"}`, "reply_to")

	if d := ok(t, rt, "delete_comment", `{"id":"`+first+`"}`); d["deleted"] != true {
		t.Errorf("delete: %v", d)
	}
	if d := ok(t, rt, "delete_comment", `{"id":"`+first+`"}`); d["deleted"] != false {
		t.Errorf("delete again: %v", d)
	}
	if is := ok(t, rt, "get_issue", `{"number":1042}`); is["comment_count"] != 2.0 {
		t.Errorf("comment_count %v after one of three was deleted", is["comment_count"])
	}
}

// Every example of the contract runs against the seeded tracker.
func TestContractExamples(t *testing.T) {
	rt := newServer(t)
	cat, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range cat.Services[0].Tools {
		for _, ex := range tool.Examples {
			args, _ := json.Marshal(ex)
			ok(t, rt, tool.Name, string(args))
		}
	}
}
