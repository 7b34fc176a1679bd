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

// median is the latency the law reads of a round or an epoch: the
// duration-weighted median (see weightedMedian), or the plain one when the
// "weighted" rule is ablated.
func (s *snapshot) median() time.Duration {
	if !uses("weighted") {
		return s.quantile(0.5, 0, 0)
	}
	return s.weightedMedian()
}

// weightedMedian returns the median of the recorded durations weighted by
// their length: the latency that half the slot-time was spent in calls no
// slower than. A limit caps slots, and slots are held in proportion to
// latency, so this is the latency the limit's occupants see. Unlike the plain
// median it cannot be dragged down by a flood of cheap calls that hold few
// slots. It returns 0 for an empty snapshot.
func (s *snapshot) weightedMedian() time.Duration {
	var total float64
	for i, c := range s.counts {
		if c != 0 {
			total += float64(c) * float64(histValue(i))
		}
	}
	if total == 0 {
		return 0
	}
	var seen float64
	for i, c := range s.counts {
		if c == 0 {
			continue
		}
		seen += float64(c) * float64(histValue(i))
		if seen >= total/2 {
			return histValue(i)
		}
	}
	return histValue(histBuckets - 1)
}

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
	var total float64
	for i, c := range s.counts {
		if c != 0 {
			total += float64(c) * float64(histValue(i))
		}
	}
	return time.Duration(total / float64(s.n))
}
