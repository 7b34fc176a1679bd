//go:build agilelimiter_model

package agilelimiter

import "time"

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
