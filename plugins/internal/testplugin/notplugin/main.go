// Command notplugin is a Go program that is not a plugin: it prints a line
// and exits, or with "hang" it never says anything.
package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "hang" {
		time.Sleep(time.Hour)
	}
	fmt.Println("hello, I am not a plugin")
}
