package agilelimiter

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// A histogram counts durations in log-linear buckets: exact below 16ns, then 16
// buckets per power of two, so a quantile is off by at most 1/32 of its value
// (about 3%). Memory is fixed (histBuckets counters) whatever the traffic, and
// recording is one atomic add: no lock, no allocation, no per-request slice.
//
// Durations above histMax land in the last bucket; there is nothing to learn
// from the difference between 18 minutes and an hour.
type histogram struct {
	counts [histBuckets]atomic.Uint64
}

const (
	histSubBits  = 4
	histSub      = 1 << histSubBits
	histMaxShift = 36 // top bucket starts at 2^40ns ≈ 18 minutes
	histBuckets  = (histMaxShift + 2) * histSub
)

// record adds one duration. Negative durations count as zero.
func (h *histogram) record(d time.Duration) {
	h.counts[histIndex(d)].Add(1)
}

func histIndex(d time.Duration) int {
	if d < histSub {
		if d < 0 {
			return 0
		}
		return int(d)
	}
	v := uint64(d)
	shift := bits.Len64(v) - 1 - histSubBits
	if shift > histMaxShift {
		return histBuckets - 1
	}
	return (shift+1)*histSub + int(v>>uint(shift)) - histSub
}

// histValue is the representative duration of bucket i: its midpoint.
func histValue(i int) time.Duration {
	if i < histSub {
		return time.Duration(i)
	}
	shift := i/histSub - 1
	lo := uint64(i%histSub+histSub) << uint(shift)
	return time.Duration(lo + (uint64(1)<<uint(shift))/2)
}

// snapshot is one tick's worth of a histogram, taken and reset at once.
type snapshot struct {
	counts [histBuckets]uint64
	n      uint64
}

// drain moves every count into s and zeroes h. A sample recorded while drain
// runs lands either in s or in the next tick, never nowhere. An empty bucket
// is read, not swapped: a swap is a locked write, most of the 608 buckets
// are empty in any tick, and a rate limit drains 100 times a second (an
// empty drain costs about a sixth of one that swaps every bucket:
// BenchmarkDrain). A sample recorded between the read and the skip stays
// for the next tick.
func (h *histogram) drain(s *snapshot) {
	s.n = 0
	for i := range h.counts {
		var c uint64
		if h.counts[i].Load() != 0 {
			c = h.counts[i].Swap(0)
		}
		s.counts[i] = c
		s.n += c
	}
}

// quantile returns the q-quantile of n = s.n + extra samples, where the extra
// ones all sit above every recorded one and read as above. It returns 0 when
// there is nothing to read.
func (s *snapshot) quantile(q float64, extra uint64, above time.Duration) time.Duration {
	total := s.n + extra
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total) + 0.999999)
	if rank < 1 {
		rank = 1
	}
	if rank > s.n {
		return above
	}
	var seen uint64
	for i, c := range s.counts {
		seen += c
		if seen >= rank {
			return histValue(i)
		}
	}
	return above
}

// add merges o's counts into s.
func (s *snapshot) add(o *snapshot) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		s.counts[i] += c
	}
	s.n += o.n
}

// median is the latency the law reads of a round or an epoch: the plain
// median. (A median weighted by duration was tried, to read the latency a
// slot sees; in a mix of routes it read the dearest route's latency as the
// round's, and the ablation showed it protected nothing.)
func (s *snapshot) median() time.Duration { return s.quantile(0.5, 0, 0) }

// above returns how many recorded durations fall in buckets above d's.
func (s *snapshot) above(d time.Duration) uint64 {
	var n uint64
	for _, c := range s.counts[histIndex(d)+1:] {
		n += c
	}
	return n
}

// mean returns the mean of the recorded durations at bucket resolution, 0
// for an empty snapshot.
func (s *snapshot) mean() time.Duration {
	if s.n == 0 {
		return 0
	}
	return time.Duration(s.total() / float64(s.n))
}

// total is the sum of the recorded durations at bucket resolution, in
// nanoseconds: the slot-time the answers held.
func (s *snapshot) total() float64 {
	var total float64
	for i, c := range s.counts {
		if c != 0 {
			total += float64(c) * float64(histValue(i))
		}
	}
	return total
}

// slotMedian is the duration-weighted median: the latency of the answer a
// slot picked at random is holding.
func (s *snapshot) slotMedian() time.Duration {
	half := s.total() / 2
	var seen float64
	for i, c := range s.counts {
		if c != 0 {
			if seen += float64(c) * float64(histValue(i)); seen >= half {
				return histValue(i)
			}
		}
	}
	return 0
}
