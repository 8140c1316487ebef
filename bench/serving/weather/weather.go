// Package weather is the query_weather tool of the serving comparison
// (package serving): its request and response, the input schema that toolc
// projects from bench/serving/testdata/weather, and Answer, the one handler
// function that every server calls, so that the servers differ only in
// what carries the call to it.
package weather

import (
	"context"
	"strconv"

	"github.com/toolc/toolc/plugins"
)

// Name is the tool's MCP name, as toolc names it (service "weather", tool
// query_weather); every server lists it under this name.
const Name = "weather_query_weather"

// Description is the tool's description.
const Description = "Query the weather forecast for a city"

// InputSchema is the tool's inputSchema as toolc projects it, so that the
// peers validate the same bounds, enum and defaults as toolc does
// (serving's TestInputSchema holds it to toolc export's).
const InputSchema = `{"type":"object","description":"A forecast query","properties":{` +
	`"city":{"type":"string","description":"City name, e.g. Berlin","minLength":1},` +
	`"days":{"type":"integer","description":"Number of forecast days","default":3,"minimum":1,"maximum":14},` +
	`"unit":{"type":"string","description":"Temperature unit","enum":["celsius","fahrenheit"],"default":"celsius"},` +
	`"hours":{"type":"array","description":"Hours of the day to include","items":{"type":"integer"},"maxItems":24}},` +
	`"required":["city"],"additionalProperties":false}`

// Request is a forecast query.
type Request struct {
	City  string `json:"city"`
	Days  int    `json:"days"`
	Unit  string `json:"unit"`
	Hours []int  `json:"hours,omitempty"`
}

// Response is the forecast.
type Response struct {
	Summary string  `json:"summary"`
	HighC   float64 `json:"high_c"`
}

// Answer forecasts from the city's name alone, the same answer for the
// same query, in well under a microsecond, so that the comparison measures
// the servers and not the tool.
func Answer(r Request) Response {
	var h uint32
	for i := 0; i < len(r.City); i++ {
		h = h*31 + uint32(r.City[i])
	}
	high := float64(h%250)/10 + float64(r.Days)/2
	temp, sym := high, "C"
	if r.Unit == "fahrenheit" {
		temp, sym = high*9/5+32, "F"
	}
	return Response{
		Summary: r.City + ": mostly clear, high " + strconv.FormatFloat(temp, 'f', 1, 64) + "°" + sym,
		HighC:   high,
	}
}

// Handler is query_weather on Answer, as toolc's handlers are written: the
// plugin of bench/serving/testdata/weather serves it, and the in-process
// toolc server calls it through runtime.Local.
func Handler() plugins.Handler {
	return plugins.Handle("query_weather", func(_ context.Context, req Request) (*plugins.Result, error) {
		return plugins.JSON(Answer(req))
	})
}
