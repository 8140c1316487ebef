package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"time"
)

// DefaultHealthURL is where toolc serve's health check answers by default.
const DefaultHealthURL = "http://127.0.0.1:8931/healthz"

// CheckHealth asks a toolc server's /healthz at url whether it serves,
// for a container's health check (toolc health), where there is no shell
// and no curl. It returns the answer of a server that says "ok", and an
// error saying what went wrong otherwise: no answer, another status
// ("starting", "failed", "draining"), or something that is not a toolc
// health check. With wait, it asks again every tenth of a second until
// the server says "ok" or wait has passed, for a script that has just
// started one.
//
// url may name the server rather than its check: a URL without a path
// (http://127.0.0.1:8931) and a bare host and port (127.0.0.1:8931) ask
// that server's /healthz, since that is what a user who has just started
// one knows, and a 404 from its root helps no one.
func CheckHealth(ctx context.Context, url string, wait time.Duration) ([]byte, error) {
	url = healthURL(url)
	deadline := time.Now().Add(wait)
	for {
		body, err := checkHealth(ctx, url)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return body, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// healthURL is the URL of the health check that target names (see
// CheckHealth).
func healthURL(target string) string {
	if !strings.Contains(target, "://") {
		target = "http://" + target
	}
	u, err := neturl.Parse(target)
	if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return target // as given: the request says what is wrong with it
	}
	u.Path = "/healthz"
	return u.String()
}

func checkHealth(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %v", url, err)
	}
	var answer struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if json.Unmarshal(body, &answer) != nil || answer.Status == "" {
		return nil, fmt.Errorf("%s answered %s, and not as a toolc health check does: %.200q", url, res.Status, body)
	}
	if res.StatusCode != http.StatusOK || answer.Status != "ok" {
		msg := fmt.Sprintf("%s: %s (%s)", url, answer.Status, res.Status)
		if answer.Error != "" {
			msg += ": " + answer.Error
		}
		return nil, fmt.Errorf("%s", msg)
	}
	return []byte(strings.TrimSpace(string(body))), nil
}
