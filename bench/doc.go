// Package bench holds toolc's benchmarks against its peers. The benchmarks
// live in its tests and run only when asked for:
//
//	go test -run '^$' -bench . -count 6 ./bench/ | tee bench.txt
//	benchstat -col '.name@(CueVet ToolcCheckCLI Check)' -row /tools bench.txt
//
// BenchmarkCheck times compiler.Compile in process; BenchmarkToolcCheckCLI
// and BenchmarkCueVet time `toolc check ./...` and `cue vet -c ./...` as
// processes, on the same generated corpus (see package corpus), so that the
// comparison in BENCHMARKS.md is wall time against wall time; the -col
// projection shows each toolc time relative to cue vet's. The cue
// benchmark needs the cue command on PATH:
//
//	go install cuelang.org/go/cmd/cue@v0.17.1
package bench
