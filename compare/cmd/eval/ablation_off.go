//go:build !agilelimiter_ablate

package main

// ablation says core was built so that AGILELIMITER_ABLATE turns rules off.
const ablation = false
