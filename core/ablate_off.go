//go:build !agilelimiter_ablate

package agilelimiter

// uses reports whether the law applies the named rule. In a normal build
// every rule applies and the call folds away; built with the tag
// agilelimiter_ablate, AGILELIMITER_ABLATE names rules to turn off, so
// compare/cmd/eval -ablate can show which figure each rule protects.
func uses(string) bool { return true }
