//go:build agilelimiter_ablate

package agilelimiter

import (
	"os"
	"slices"
	"strings"
)

// uses reports whether the law applies the named rule: every rule but those
// named, comma-separated, in AGILELIMITER_ABLATE. Only an ablation build
// (the tag agilelimiter_ablate) reads the environment; see compare/cmd/eval
// -ablate.
func uses(rule string) bool {
	return !slices.Contains(strings.Split(os.Getenv("AGILELIMITER_ABLATE"), ","), rule)
}
