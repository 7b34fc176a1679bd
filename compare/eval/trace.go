package eval

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// ScenarioByName returns the scenario a name stands for: a named one (see
// Named), or "out-N" / "in-N", the outbound or inbound scenario Generate
// draws from seed N, whichever set the seed belongs to.
func ScenarioByName(name string) (Scenario, error) {
	for _, sc := range Named() {
		if sc.Name == name {
			return sc, nil
		}
	}
	base, draw, ok := splitDraw(name)
	if !ok {
		return Scenario{}, fmt.Errorf("eval: no scenario %q: a draw is /d1 to /d65535", name)
	}
	for prefix, dir := range map[string]Direction{"out-": Outbound, "in-": Inbound} {
		if rest, ok := strings.CutPrefix(base, prefix); ok {
			if seed, err := strconv.ParseUint(rest, 10, 64); err == nil {
				sc := Generate(dir, seed)
				if draw > 0 {
					sc.Draw = draw
					sc.Name += drawSuffix(draw)
				}
				return sc, nil
			}
		}
	}
	return Scenario{}, fmt.Errorf("eval: no scenario %q: want a named one, or out-N / in-N with an optional draw /dK", name)
}

// TraceTicks runs the project's limiter (the "agile" arm, default configuration
// with the scenario's SLO) through sc and writes one line per controller
// tick: what it read (the tick's p50 and p99, the answers it counted), the
// model it holds (floor and window), the limit it set and the decision
// that set it, with its gauge (callers waiting for a slot outbound, the
// peak in flight inbound). It is how one scenario's figures are explained;
// the evaluation says which scenarios need it. Inbound, initial is the
// limiter's InitialLimit (0: its own start; PipeLimit traces KnownStart's
// arm); outbound it is not read. It must be called inside a synctest
// bubble, and returns the run's Result.
func TraceTicks(w io.Writer, sc *Scenario, initial int) Result {
	t := &tracer{w: w}
	fmt.Fprintf(w, "%s: %s\n", sc.Name, sc.About)
	if sc.Direction == Inbound {
		return RunInbound(sc, InboundArm{Name: "agile", New: func(sc *Scenario) Admitter {
			a := newAgile(sc, initial)
			t.start(a.l.Stats, "peak", nil, agilelimiter.DefaultTickInterval)
			return tracedAdmitter{a, t}
		}})
	}
	return RunOutbound(sc, OutboundArm{Name: "agile", New: func(sc *Scenario) Pacer {
		l := agilelimiter.New(agilelimiter.Config{MaxRate: sc.MaxRate, SLOTarget: sc.SLO})
		l.Start()
		t.start(l.Stats, "wait", l.Rate, agilelimiter.DefaultRateTickInterval)
		return tracedPacer{agilePacer{l}, t}
	}})
}

// tracer writes a limiter's Stats at every tick of its controller, from a
// goroutine of the bubble that stop ends.
type tracer struct {
	w    io.Writer
	quit chan struct{}
	done chan struct{}
}

// rate, when not nil, is what a rate limit paces at now: the limit, or less
// while too many calls are in flight; every is the limiter's tick.
func (t *tracer) start(stats func() agilelimiter.Stats, gauge string, rate func() float64, every time.Duration) {
	t.quit, t.done = make(chan struct{}), make(chan struct{})
	begin := time.Now()
	fmt.Fprintf(t.w, "%7s %8s %8s %5s %9s %9s %9s %9s %4s %s\n", "time", "limit", "paced", gauge, "p50", "p99", "floor", "high", "n", "decision")
	go func() {
		defer close(t.done)
		var last uint64
		// Twice a controller tick: every tick is seen, at most half a
		// tick late.
		tick := time.NewTicker(every / 2)
		defer tick.Stop()
		for {
			select {
			case <-t.quit:
				return
			case <-tick.C:
			}
			st := stats()
			if st.Ticks == last {
				continue
			}
			last = st.Ticks
			g := st.Waiting
			if gauge == "peak" {
				g = st.PeakInFlight
			}
			r := func(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
			paced := st.Limit
			if rate != nil {
				paced = rate()
			}
			fmt.Fprintf(t.w, "%6.2fs %8.1f %8.1f %5d %9v %9v %9v %9v %4d %s\n", time.Since(begin).Seconds(), st.Limit, paced, g,
				r(st.P50), r(st.P99), r(st.Baseline), r(st.High), st.Samples, st.Decision)
		}
	}()
}

func (t *tracer) stop() {
	close(t.quit)
	<-t.done
}

type tracedPacer struct {
	agilePacer
	t *tracer
}

func (p tracedPacer) Stop() { p.t.stop(); p.agilePacer.Stop() }

type tracedAdmitter struct {
	agileAdmitter
	t *tracer
}

func (a tracedAdmitter) Stop() { a.t.stop(); a.agileAdmitter.Stop() }
