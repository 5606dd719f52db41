// tests/tlog/go/verify.go: Go's own golang.org/x/mod/sumdb/note and
// sumdb/tlog, as an independent verifier and maker of World's formats for
// tests/tlog/go_verify.sh (GOPATH mode, Debian's golang-golang-x-mod-dev,
// no network).
//
//	verify checkpoint VKEYFILE CHECKPOINT          prints "SIZE ROOT"
//	verify inclusion VKEYFILE CHECKPOINT N LEAF PROOF
//	verify consistency VKEYFILE OLD NEW PROOF
//	verify mutate NOTE DIR COUNT                   COUNT variants of a signed note, DIR/m.1..COUNT
//	     (a byte changed, dropped or added; a signature line repeated, edited or
//	     joined by another key's), for the differential test
//	verify open VKEYFILE FILE...                   one line per FILE: "ok" or "refused"
//	     (checkpoint's checks: note.Open with the key, the body, the origin)
//	verify make DIR NAME COUNT SIZE...             Go's side: a key (DIR/go.skey,
//	     DIR/go.vkey), entries DIR/leaf.1..COUNT, their stored hashes (tlog.StoredHashes),
//	     a signed checkpoint DIR/cp.S of each SIZE (note.Sign), and the proofs
//	     DIR/incl.N.S (every entry N of each S) and DIR/cons.A.B (A < B among the SIZEs)
//
// Entry N is leaf N-1 (World's numbering); a checkpoint's origin is the
// key's name; proofs are one base64 hash a line. Exit 0 verified / made, 1
// refused (the reason on stderr), 2 usage.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	mrand "math/rand"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "go verify: "+format+"\n", args...)
	os.Exit(1)
}

func read(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	return b
}

type checkpoint struct {
	origin string
	size   int64
	root   tlog.Hash
}

// openCheckpoint: note.Open with the one key, then the C2SP body.
func openCheckpoint(vkeyFile, path string) checkpoint {
	cp, err := tryCheckpoint(vkeyFile, read(path))
	if err != nil {
		fail("checkpoint %s: %v", path, err)
	}
	return cp
}

func tryCheckpoint(vkeyFile string, msg []byte) (checkpoint, error) {
	v, err := note.NewVerifier(strings.TrimSpace(string(read(vkeyFile))))
	if err != nil {
		fail("key %s: %v", vkeyFile, err)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return checkpoint{}, err
	}
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) < 4 || lines[0] == "" {
		return checkpoint{}, fmt.Errorf("fewer than 3 lines")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return checkpoint{}, fmt.Errorf("bad size %q", lines[1])
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		return checkpoint{}, fmt.Errorf("bad root %q", lines[2])
	}
	if lines[0] != v.Name() {
		return checkpoint{}, fmt.Errorf("origin %q is not the key's name %q", lines[0], v.Name())
	}
	return checkpoint{lines[0], size, root}, nil
}

// mutate: variants of a signed note, seeded (the same files every run).
func mutate(path, dir string, count int64) {
	orig := read(path)
	r := mrand.New(mrand.NewSource(43))
	b64 := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	split := bytes.LastIndex(orig, []byte("\n\n"))
	sig := orig[split+2:]
	for i := int64(1); i <= count; i++ {
		m := append([]byte(nil), orig...)
		switch r.Intn(7) {
		case 0: // a byte changed to any value
			m[r.Intn(len(m))] = byte(r.Intn(256))
		case 1: // a byte dropped
			j := r.Intn(len(m))
			m = append(m[:j], m[j+1:]...)
		case 2: // a byte added
			j := r.Intn(len(m) + 1)
			m = append(m[:j], append([]byte{byte(r.Intn(256))}, m[j:]...)...)
		case 3: // the signature line again, before or after
			if r.Intn(2) == 0 {
				m = append(m, sig...)
			} else {
				m = append(append(append([]byte(nil), orig[:split+2]...), sig...), sig...)
			}
		case 4: // one base64 character of the signature line changed (some only padding bits)
			at := len(m) - 2 - r.Intn(8)
			if m[at] == '=' {
				at--
			}
			m[at] = b64[r.Intn(64)]
		case 5: // another key's line, before or after ours
			raw := make([]byte, 5+r.Intn(80))
			r.Read(raw)
			line := []byte(fmt.Sprintf("\u2014 other.example/w%d %s\n", r.Intn(9), base64.StdEncoding.EncodeToString(raw)))
			if r.Intn(2) == 0 {
				m = append(m, line...)
			} else {
				m = append(append(append([]byte(nil), orig[:split+2]...), line...), sig...)
			}
		case 6: // a blank line inserted after the first line
			m = bytes.Replace(m, []byte("\n"), []byte("\n\n"), 1)
		}
		os.WriteFile(fmt.Sprintf("%s/m.%d", dir, i), m, 0644)
	}
}

func readProof(path string) []tlog.Hash {
	var p []tlog.Hash
	for _, l := range strings.Split(strings.TrimSuffix(string(read(path)), "\n"), "\n") {
		if l == "" {
			continue
		}
		h, err := tlog.ParseHash(l)
		if err != nil {
			fail("proof %s: %v", path, err)
		}
		p = append(p, h)
	}
	return p
}

func writeProof(path string, p []tlog.Hash) {
	var b bytes.Buffer
	for _, h := range p {
		b.WriteString(h.String() + "\n")
	}
	if err := os.WriteFile(path, b.Bytes(), 0644); err != nil {
		fail("%v", err)
	}
}

func atoi(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go verify: %q is not a number\n", s)
		os.Exit(2)
	}
	return n
}

func main() {
	a := os.Args[1:]
	switch {
	case len(a) == 3 && a[0] == "checkpoint":
		cp := openCheckpoint(a[1], a[2])
		fmt.Printf("%d %s\n", cp.size, cp.root)
	case len(a) == 6 && a[0] == "inclusion":
		cp := openCheckpoint(a[1], a[2])
		n := atoi(a[3])
		if n < 1 || n > cp.size {
			fail("entry %d is not in the tree of size %d", n, cp.size)
		}
		if err := tlog.CheckRecord(readProof(a[5]), cp.size, cp.root, n-1, tlog.RecordHash(read(a[4]))); err != nil {
			fail("entry %d: %v", n, err)
		}
		fmt.Printf("entry %d in tree %d: ok\n", n, cp.size)
	case len(a) == 5 && a[0] == "consistency":
		old, nw := openCheckpoint(a[1], a[2]), openCheckpoint(a[1], a[3])
		if err := tlog.CheckTree(readProof(a[4]), nw.size, nw.root, old.size, old.root); err != nil {
			fail("tree %d -> %d: %v", old.size, nw.size, err)
		}
		fmt.Printf("tree %d prefix of %d: ok\n", old.size, nw.size)
	case len(a) == 4 && a[0] == "mutate":
		mutate(a[1], a[2], atoi(a[3]))
	case len(a) >= 3 && a[0] == "open":
		for _, f := range a[2:] {
			if _, err := tryCheckpoint(a[1], read(f)); err != nil {
				fmt.Printf("%s refused\n", f)
			} else {
				fmt.Printf("%s ok\n", f)
			}
		}
	case len(a) >= 4 && a[0] == "make":
		makeLog(a[1], a[2], atoi(a[3]), a[4:])
	default:
		fmt.Fprintln(os.Stderr, "usage: see tests/tlog/go/verify.go")
		os.Exit(2)
	}
}

func makeLog(dir, name string, count int64, sizeArgs []string) {
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		fail("%v", err)
	}
	os.WriteFile(dir+"/go.skey", []byte(skey+"\n"), 0600)
	os.WriteFile(dir+"/go.vkey", []byte(vkey+"\n"), 0644)
	signer, err := note.NewSigner(skey)
	if err != nil {
		fail("%v", err)
	}
	var stored []tlog.Hash
	reader := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = stored[x]
		}
		return out, nil
	})
	for n := int64(1); n <= count; n++ {
		leaf := []byte(fmt.Sprintf(`{"go":%d,"text":"entry %d, written by Go"}`, n, n))
		os.WriteFile(fmt.Sprintf("%s/leaf.%d", dir, n), leaf, 0644)
		hs, err := tlog.StoredHashes(n-1, leaf, reader)
		if err != nil {
			fail("%v", err)
		}
		stored = append(stored, hs...)
	}
	var sizes []int64
	for _, s := range sizeArgs {
		sizes = append(sizes, atoi(s))
	}
	for _, s := range sizes {
		root, err := tlog.TreeHash(s, reader)
		if err != nil {
			fail("%v", err)
		}
		msg, err := note.Sign(&note.Note{Text: fmt.Sprintf("%s\n%d\n%s\n", name, s, root)}, signer)
		if err != nil {
			fail("%v", err)
		}
		os.WriteFile(fmt.Sprintf("%s/cp.%d", dir, s), msg, 0644)
		for n := int64(1); n <= s; n++ {
			p, err := tlog.ProveRecord(s, n-1, reader)
			if err != nil {
				fail("%v", err)
			}
			writeProof(fmt.Sprintf("%s/incl.%d.%d", dir, n, s), p)
		}
		for _, b := range sizes {
			if b > s {
				p, err := tlog.ProveTree(b, s, reader)
				if err != nil {
					fail("%v", err)
				}
				writeProof(fmt.Sprintf("%s/cons.%d.%d", dir, s, b), p)
			}
		}
	}
}
