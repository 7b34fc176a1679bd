// Package cmdmain runs a command of compare/ as the single test of a
// testing.Main: the one way for a command to get the *testing.T that
// testing/synctest bubbles need.
package cmdmain

import (
	"fmt"
	"os"
	"testing"
)

// Run runs f as that test and exits: with 0 when f returns nil and nothing
// failed, 1 otherwise (after printing name and f's error on stderr). Parse
// the command's flags before calling it and do not call testing.Init: then
// -h lists the command's flags alone and a -test.* flag is refused. It
// exits from inside the test, before testing.Main would print PASS on the
// command's output. A failure reported through t (a goroutine left in a
// bubble) is printed by testing.
func Run(name string, f func(t *testing.T) error) {
	testing.Main(func(string, string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: name, F: func(t *testing.T) {
			if err := f(t); err != nil {
				fmt.Fprintln(os.Stderr, name+":", err)
				os.Exit(1)
			}
			if !t.Failed() {
				os.Exit(0)
			}
		}}}, nil, nil)
}
