package main

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
)

// climate is a city's typical daily high and how much it varies.
type climate struct {
	highC, spread float64
}

// climates are a few cities known by name; every other city gets a
// climate derived from its name.
var climates = map[string]climate{
	"berlin":    {14, 6},
	"london":    {15, 4},
	"paris":     {16, 5},
	"madrid":    {21, 6},
	"rome":      {21, 5},
	"oslo":      {10, 7},
	"reykjavik": {7, 4},
	"cairo":     {29, 4},
	"new york":  {17, 7},
	"tokyo":     {20, 6},
	"singapore": {31, 1},
	"sydney":    {22, 4},
}

var conditions = []string{"sunny", "partly cloudy", "cloudy", "light rain", "showers", "windy"}

// day is one forecast day.
type day struct {
	highC     float64
	condition string
}

// forecastDays returns n days of forecast for city. With hours, each day's
// high is the highest temperature within those hours. The numbers depend
// only on the arguments.
func forecastDays(city string, n int, hours []int) []day {
	key := strings.ToLower(city)
	c, ok := climates[key]
	if !ok {
		r := rng(key, 0)
		c = climate{highC: 4 + 26*r.Float64(), spread: 2 + 6*r.Float64()}
	}
	days := make([]day, max(n, 1))
	for i := range days {
		r := rng(key, i+1)
		high := c.highC + c.spread*(2*r.Float64()-1)
		if len(hours) > 0 {
			best := math.Inf(-1)
			for _, h := range hours {
				best = max(best, atHour(high, c.spread, h))
			}
			high = best
		}
		days[i] = day{highC: round1(high), condition: conditions[r.IntN(len(conditions))]}
	}
	return days
}

// atHour is the temperature at hour h of a day whose high, at 15:00, is
// high: a cosine curve that is coolest at 03:00.
func atHour(high, spread float64, h int) float64 {
	swing := 4 + spread
	return high - swing*(1-math.Cos(2*math.Pi*float64(h-15)/24))/2
}

// rng is a random source seeded by the city and the day.
func rng(city string, day int) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(city))
	return rand.New(rand.NewPCG(h.Sum64(), uint64(day)))
}

// mostCommon returns the condition of most days; on a tie, the one that
// comes first.
func mostCommon(days []day) string {
	count := map[string]int{}
	for _, d := range days {
		count[d.condition]++
	}
	best := days[0].condition
	for _, d := range days {
		if count[d.condition] > count[best] {
			best = d.condition
		}
	}
	return best
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }
