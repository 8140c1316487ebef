// Command embed is a small service that embeds a compiled toolc catalog
// and serves its projections, the way a production service ships its tool
// contracts: no CUE and no toolc at run time, only the catalog file that
// `toolc build` wrote, checked by its fingerprints when the service starts.
//
//	go generate ./examples/embed      # rebuild toolc.catalog.json from the contracts
//	go run ./examples/embed -addr 127.0.0.1:8080
//	curl '127.0.0.1:8080/tools?format=openai-chat&strict=1&tools=query_weather'
//
// The catalog is built from the module root, so that the paths in it are
// the same in every checkout. TestEmbeddedCatalogIsCurrent fails when the
// contracts have changed since the last go generate.
package main

//go:generate go run -C ../.. ./cmd/toolc build -o examples/embed/toolc.catalog.json ./examples/weather ./examples/issuetracker ./examples/filesearch

import (
	"embed"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/toolc/toolc/catalog"
)

// catalogFile is the embedded catalog, written by go generate.
const catalogFile = "toolc.catalog.json"

//go:embed toolc.catalog.json
var catalogFS embed.FS

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen on `ADDR`")
	flag.Parse()
	cat, err := catalog.Load(catalogFS, catalogFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "embed: %v\n", err)
		os.Exit(1)
	}
	log.Printf("serving %d tools of catalog %s on http://%s/tools", len(cat.ToolNames()), cat.Fingerprint, *addr)
	srv := &http.Server{Addr: *addr, Handler: newHandler(cat), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
