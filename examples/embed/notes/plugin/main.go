// Command plugin is the handler plugin of the notes service: toolc dev and
// toolc serve build it and run it, so that the tools can be developed with
// toolc dev's reloading. Serve, in tools_gen.go beside this file, serves
// package notes' Handlers; examples/embed runs the same Handlers in its
// own process, and links none of the plugin protocol that this program
// does.
package main

import "github.com/toolc/toolc/examples/embed/notes"

func main() {
	Serve(notes.New())
}
