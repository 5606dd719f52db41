// A stand-in for the upstream interpreter (a static Go binary): honours the
// docs/design.md §2 command line, reads its args file and prints a JSON object.
// Built by tests/capsule/go.sh with CGO_ENABLED=0 and run in a capsule.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sync"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println("GO-FIXTURE v0 (not AILANG)")
		return
	}
	argsFile := ""
	for i := 1; i+1 < len(os.Args); i++ {
		if os.Args[i] == "--args-file" {
			argsFile = os.Args[i+1]
		}
	}
	raw, err := os.ReadFile(argsFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
	var input string
	if err := json.Unmarshal(raw, &input); err != nil {
		fmt.Fprintln(os.Stderr, "Error: args file:", err)
		os.Exit(1)
	}
	src, err := os.ReadFile(os.Args[len(os.Args)-1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
	// Exercise the runtime: goroutines on several threads, GC, the cache dir.
	var wg sync.WaitGroup
	sum := make([]int, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			buf := make([][]byte, 0)
			for i := 0; i < 200; i++ {
				buf = append(buf, make([]byte, 4096))
			}
			sum[g] = len(buf)
		}(g)
	}
	wg.Wait()
	runtime.GC()
	cache := os.Getenv("AILANG_CACHE_DIR")
	werr := os.WriteFile(cache+"/go-cache-test", []byte("x"), 0600)
	out, _ := json.Marshal(map[string]interface{}{
		"go": runtime.Version(), "input": input, "source_bytes": len(src),
		"goroutines_done": len(sum), "cache_write_ok": werr == nil, "env": len(os.Environ()),
	})
	fmt.Println(string(out))
}
