//go:build agilelimiter_ablate

package agilelimiter

import (
	"os"
	"slices"
	"strconv"
	"strings"
)

// uses reports whether the law applies the named rule: every rule but those
// named, comma-separated, in AGILELIMITER_ABLATE. Only an ablation build
// (the tag agilelimiter_ablate) reads the environment; see compare/cmd/eval
// -ablate.
func uses(rule string) bool {
	return !slices.Contains(strings.Split(os.Getenv("AGILELIMITER_ABLATE"), ","), rule)
}

// knob is the value of one of the law's thresholds: def, unless
// AGILELIMITER_KNOB sets the named one ("name=value", comma-separated). Only
// an ablation build reads the environment, so that compare/cmd/eval -ablate
// name=value can measure the law at another value without an edit to it.
func knob(name string, def float64) float64 {
	for _, kv := range strings.Split(os.Getenv("AGILELIMITER_KNOB"), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return f
			}
		}
	}
	return def
}
