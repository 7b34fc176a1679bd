// Command modproxy writes a file-based Go module proxy (GOPROXY=file://DIR)
// that serves this repository's modules at one version, zipped from a git
// revision exactly as a tag would publish them (golang.org/x/mod/zip, the
// code the go command and proxy.golang.org use). .ci/run points a user
// module at it, outside the workspace, to prove that the modules install
// from outside: a go.mod that requires a sibling at v0.0.0 or carries a
// replace fails there, as it would for a user.
//
//	go run ./.ci/modproxy -repo . -rev HEAD -version v0.1.0 -out /tmp/proxy core nethttp gin echo fiber resty
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

const prefix = "github.com/agilelimiter/agilelimiter/"

func main() {
	repo := flag.String("repo", ".", "the repository's root")
	rev := flag.String("rev", "HEAD", "the git revision to publish")
	version := flag.String("version", "v0.1.0", "the version every module is published at")
	out := flag.String("out", "", "the proxy's directory (created)")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		log.Fatal("usage: modproxy -out DIR [-repo DIR] [-rev REV] [-version V] module-dir...")
	}
	root, err := filepath.Abs(*repo)
	if err != nil {
		log.Fatal(err)
	}
	for _, dir := range flag.Args() {
		if err := publish(root, *rev, dir, *version, *out); err != nil {
			log.Fatalf("%s: %v", dir, err)
		}
		fmt.Printf("%s%s@%s\n", prefix, dir, *version)
	}
}

// publish writes dir's module at version into the proxy at out: its
// version list, .info, .mod and .zip.
func publish(root, rev, dir, version, out string) error {
	// The go.mod at rev, as the zip holds it: what the proxy serves as .mod.
	gomod, err := exec.Command("git", "-C", root, "show", rev+":"+dir+"/go.mod").Output()
	if err != nil {
		return fmt.Errorf("git show %s:%s/go.mod: %w", rev, dir, err)
	}
	f, err := modfile.ParseLax("go.mod", gomod, nil)
	if err != nil {
		return err
	}
	m := module.Version{Path: f.Module.Mod.Path, Version: version}
	if m.Path != prefix+dir {
		return fmt.Errorf("module path %s, want %s", m.Path, prefix+dir)
	}
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	at := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	z, err := os.Create(filepath.Join(at, version+".zip"))
	if err != nil {
		return err
	}
	if err := zip.CreateFromVCS(z, m, root, rev, dir); err != nil {
		z.Close()
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(at, version+".mod"), gomod, 0o644); err != nil {
		return err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err := os.WriteFile(filepath.Join(at, version+".info"), info, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(at, "list"), []byte(strings.TrimSpace(version)+"\n"), 0o644)
}
