// Package compare is the evidence that agilelimiter does its job, in numbers
// anyone can reproduce: the virtual-time simulator and scenario matrix live in
// compare/sim, the charts and tables in compare/report and cmd/matrix, and this
// package holds the hot-path benchmarks against peer libraries (bench_test.go)
// and the inbound comparison on a service with a concurrency knee.
package compare
