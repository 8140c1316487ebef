package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolc/toolc/runtime"
	"github.com/toolc/toolc/toolctest"
)

func forecastOf(t *testing.T, rt *runtime.Runtime, args string) QueryWeatherResponse {
	t.Helper()
	res, _ := call(t, rt, "query_weather", args)
	if res.IsError {
		t.Fatalf("%s: tool error %q", args, res.Content[0].Text)
	}
	var f QueryWeatherResponse
	if err := json.Unmarshal(res.StructuredContent.(json.RawMessage), &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestQueryWeather(t *testing.T) {
	rt := serve(t, Handlers(forecaster{})...)
	f := forecastOf(t, rt, `{"city":"Berlin"}`)
	if !strings.HasPrefix(f.Summary, "Berlin, the next 3 days: mostly ") || !strings.Contains(f.Summary, "°C") {
		t.Errorf("summary %q, want Berlin's 3-day forecast in Celsius (the defaults)", f.Summary)
	}
	if f.HighC < 14-6 || f.HighC > 14+6 {
		t.Errorf("high_c %v is outside Berlin's climate", f.HighC)
	}
	if again := forecastOf(t, rt, `{"city":"berlin","days":3,"unit":"celsius"}`); again.HighC != f.HighC {
		t.Errorf("berlin: high_c %v, Berlin %v: the forecast should not depend on case or on spelling out the defaults", again.HighC, f.HighC)
	}

	today := forecastOf(t, rt, `{"city":"Berlin","days":1}`)
	if !strings.HasPrefix(today.Summary, "Berlin, today: ") || !strings.Contains(today.Summary, "high ") {
		t.Errorf("one day: summary %q", today.Summary)
	}
	if today.HighC > f.HighC {
		t.Errorf("today's high %v is above the 3-day high %v, which includes today", today.HighC, f.HighC)
	}
}

func TestQueryWeatherUnknownCityIsDeterministic(t *testing.T) {
	rt := serve(t, Handlers(forecaster{})...)
	a := forecastOf(t, rt, `{"city":"Atlantis","days":7}`)
	b := forecastOf(t, rt, `{"city":"Atlantis","days":7}`)
	if a != b {
		t.Errorf("two answers for one query: %+v and %+v", a, b)
	}
	if a.HighC < -10 || a.HighC > 45 {
		t.Errorf("high_c %v is not a plausible temperature", a.HighC)
	}
}

func TestQueryWeatherFahrenheit(t *testing.T) {
	rt := serve(t, Handlers(forecaster{})...)
	c := forecastOf(t, rt, `{"city":"Cairo","days":2}`)
	f := forecastOf(t, rt, `{"city":"Cairo","days":2,"unit":"fahrenheit"}`)
	if !strings.Contains(f.Summary, "°F") || strings.Contains(f.Summary, "°C") {
		t.Errorf("summary %q, want °F only", f.Summary)
	}
	if f.HighC != c.HighC {
		t.Errorf("high_c %v in Fahrenheit mode, %v in Celsius: high_c is always Celsius", f.HighC, c.HighC)
	}
}

func TestQueryWeatherHours(t *testing.T) {
	rt := serve(t, Handlers(forecaster{})...)
	all := forecastOf(t, rt, `{"city":"Oslo"}`)
	night := forecastOf(t, rt, `{"city":"Oslo","hours":[2,3,4]}`)
	if night.HighC >= all.HighC {
		t.Errorf("night high %v, day high %v: nights should be cooler", night.HighC, all.HighC)
	}
	if !strings.HasSuffix(night.Summary, " between 02:00 and 04:00") {
		t.Errorf("summary %q does not name the hours", night.Summary)
	}
}

func TestQueryWeatherErrors(t *testing.T) {
	rt := serve(t, Handlers(forecaster{})...)
	for _, tc := range []struct{ args, want string }{
		{`{"city":"Berlin","hours":[9,24]}`, "hour 24 is not an hour of the day"},
		{`{"city":"   "}`, "city is blank"},
		// The runtime refuses these before the handler runs.
		{`{"city":""}`, "city"},
		{`{"city":"Berlin","days":15}`, "days"},
		{`{"city":"Berlin","unit":"kelvin"}`, "unit"},
		{`{}`, "city"},
	} {
		res, _ := call(t, rt, "query_weather", tc.args)
		if !res.IsError || !strings.Contains(res.Content[0].Text, tc.want) {
			t.Errorf("%s: %+v, want a tool error about %q", tc.args, res.Content, tc.want)
		}
	}
}

// The handler also runs without the runtime, as in a service that embeds
// the catalog and calls Handler.Call itself; its structured content has
// exactly the contract's response fields.
func TestHandlerCallDirectly(t *testing.T) {
	res, err := Handlers(forecaster{})[0].Call(t.Context(), json.RawMessage(`{"city":"Rome","days":2,"unit":"celsius"}`))
	if err != nil || res.IsError {
		t.Fatalf("= %+v, %v", res, err)
	}
	var fields map[string]any
	if err := json.Unmarshal(res.StructuredContent.(json.RawMessage), &fields); err != nil {
		t.Fatal(err)
	}
	if _, ok := fields["summary"].(string); !ok || len(fields) != 2 {
		t.Errorf("structured content %v, want summary and high_c only", fields)
	}
	if _, ok := fields["high_c"].(float64); !ok {
		t.Errorf("high_c is %T, want a number", fields["high_c"])
	}
	if len(res.Content) != 1 || res.Content[0].Text != string(res.StructuredContent.(json.RawMessage)) {
		t.Errorf("content %+v, want the JSON as text", res.Content)
	}
}

// TestQueryWeatherOverMCP calls the tool through the generated test client
// (tools_gen_test.go), as a model's MCP client would: the compiled contract
// embedded there checks the arguments and fills in the defaults, with no
// CUE at test time.
func TestQueryWeatherOverMCP(t *testing.T) {
	c := newTestClient(t, forecaster{})
	f, err := c.QueryWeather(t.Context(), map[string]any{"city": "Berlin"})
	if err != nil {
		t.Fatal(err)
	}
	if want := forecastOf(t, serve(t, Handlers(forecaster{})...), `{"city":"Berlin","days":3,"unit":"celsius"}`); *f != want {
		t.Errorf("over MCP %+v, through the runtime with the defaults spelt out %+v", *f, want)
	}
	_, err = c.QueryWeather(t.Context(), `{"city":"Berlin","days":15}`)
	var toolErr *toolctest.ToolError
	if !errors.As(err, &toolErr) || !strings.Contains(toolErr.Message, "days") {
		t.Errorf("days 15 = %v, want a tool error about days", err)
	}
}
