// Command weather is the handler plugin of the weather-service contract.
//
// It needs no network: the forecast comes from a small built-in climate
// table, and for other cities from a formula seeded by the city's name,
// so the same query always gets the same answer.
package main

//go:generate go run ../../cmd/toolc gen go .

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

func main() {
	Serve(forecaster{})
}

// forecaster implements the contract's tools (Tools, in tools_gen.go).
type forecaster struct{}

// QueryWeather answers a forecast query. The runtime has applied the
// contract's defaults (days 3, unit celsius) and checked its bounds before
// it runs; q.Hours is nil when the caller gave none.
func (forecaster) QueryWeather(_ context.Context, q QueryWeatherRequest) (*QueryWeatherResponse, error) {
	city := strings.TrimSpace(q.City)
	if city == "" {
		return nil, errors.New("city is blank; give a city name such as Berlin")
	}
	for _, h := range q.Hours {
		if h < 0 || h > 23 {
			return nil, fmt.Errorf("hour %d is not an hour of the day: give hours from 0 to 23", h)
		}
	}
	days := forecastDays(city, q.Days, q.Hours)
	return &QueryWeatherResponse{Summary: summarize(city, days, q.Unit, q.Hours), HighC: highest(days)}, nil
}

// summarize writes the one-line forecast, in the unit asked for.
func summarize(city string, days []day, unit QueryWeatherUnit, hours []int) string {
	lo, hi := days[0].highC, days[0].highC
	for _, d := range days[1:] {
		lo, hi = min(lo, d.highC), max(hi, d.highC)
	}
	sym := "°C"
	if unit == QueryWeatherUnitFahrenheit {
		lo, hi, sym = fahrenheit(lo), fahrenheit(hi), "°F"
	}
	span := "today"
	if len(days) > 1 {
		span = fmt.Sprintf("the next %d days", len(days))
	}
	when := ""
	if len(hours) > 0 {
		when = fmt.Sprintf(" between %02d:00 and %02d:00", slices.Min(hours), slices.Max(hours))
	}
	temps := fmt.Sprintf("high %.1f%s", hi, sym)
	if len(days) > 1 {
		temps = fmt.Sprintf("highs %.1f to %.1f%s", lo, hi, sym)
	}
	sky := days[0].condition
	if len(days) > 1 {
		sky = "mostly " + mostCommon(days)
	}
	return fmt.Sprintf("%s, %s: %s, %s%s", city, span, sky, temps, when)
}

func highest(days []day) float64 {
	hi := days[0].highC
	for _, d := range days[1:] {
		hi = max(hi, d.highC)
	}
	return hi
}

func fahrenheit(c float64) float64 { return round1(c*9/5 + 32) }
