//go:build !agilelimiter_ablate

package agilelimiter

// uses reports whether the law applies the named rule. In a normal build
// every rule applies and the call folds away; built with the tag
// agilelimiter_ablate, AGILELIMITER_ABLATE names rules to turn off, so
// compare/cmd/eval -ablate can show which figure each rule protects.
func uses(string) bool { return true }

// knob is the value of one of the law's thresholds: def, the named constant,
// in a normal build (the call folds away). Built with the tag
// agilelimiter_ablate, AGILELIMITER_KNOB sets it, so compare/cmd/eval -ablate
// name=value can measure the law at another value.
func knob(_ string, def float64) float64 { return def }
