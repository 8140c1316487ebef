module github.com/toolc/toolc

go 1.26.8

require (
	cuelang.org/go v0.17.1 // indirect
	golang.org/x/tools v0.52.0 // indirect
)
