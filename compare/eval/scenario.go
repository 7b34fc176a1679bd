package eval

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Direction says which limiter a scenario is for.
type Direction int

const (
	// Outbound scenarios pace calls to a dependency: the arms are rate
	// limiters in front of callers with deadlines.
	Outbound Direction = iota
	// Inbound scenarios cap a service's requests in flight: the arms are
	// non-blocking concurrency limiters in front of the service.
	Inbound
)

// String returns "outbound" or "inbound".
func (d Direction) String() string {
	if d == Inbound {
		return "inbound"
	}
	return "outbound"
}

// Law is how the protected resource serves requests.
type Law int

const (
	// FIFOExp is M/M/c: Servers servers, one FIFO queue, exponential service
	// times.
	FIFOExp Law = iota
	// FIFOLogNormal is a FIFO queue in front of Servers servers whose service
	// times are lognormal with shape Sigma (mean one service time).
	FIFOLogNormal
	// FIFOPareto is a FIFO queue in front of Servers servers whose service
	// times are Pareto with tail index Alpha: a heavy tail.
	FIFOPareto
	// PSKnee is processor sharing past a concurrency knee: every request
	// starts at once, and while n are in service each is served at
	// min(1, (Knee/n)²) of its unloaded speed, re-shared at every arrival
	// and departure. At a steady n a request takes base × max(1, (n/Knee)²),
	// where base is Knee / capacity, and past the knee the server thrashes:
	// it answers capacity × Knee/n.
	PSKnee
)

// String returns the law's name as the report prints it.
func (l Law) String() string {
	switch l {
	case FIFOExp:
		return "M/M/c"
	case FIFOLogNormal:
		return "FIFO lognormal"
	case FIFOPareto:
		return "FIFO Pareto"
	case PSKnee:
		return "PS knee"
	}
	return fmt.Sprintf("Law(%d)", int(l))
}

// TraceKind is what happens to the resource during a run.
type TraceKind int

const (
	// Constant: nothing moves.
	Constant TraceKind = iota
	// Step: capacity is multiplied by Factor at At.
	Step
	// Ramp: capacity moves linearly from its initial value to Factor × it
	// between At and Until.
	Ramp
	// Flap: capacity alternates between its initial value and Factor × it
	// every Period.
	Flap
	// Outage: the resource refuses every call at once during [At, Until).
	Outage
	// Diurnal: capacity follows 1 + Amp·sin(2πt/Period) of its initial value.
	Diurnal
	// LevelShift: the network round trip is multiplied by Factor at At;
	// capacity is unchanged (a benign rise or fall).
	LevelShift
	// SlowBursts: during each of Bursts, a share SlowShare of requests costs
	// SlowCost times as much.
	SlowBursts
	// Dip: capacity is multiplied by Factor during [At, Until). Only the
	// named scenarios use it; the generator draws the kinds above.
	Dip
)

// drawnKinds is how many trace kinds the generator draws from.
const drawnKinds = int(SlowBursts) + 1

var traceNames = [...]string{"constant", "step", "ramp", "flap", "outage", "diurnal", "level-shift", "slow-bursts", "dip"}

// String returns the kind's name.
func (k TraceKind) String() string {
	if k >= 0 && int(k) < len(traceNames) {
		return traceNames[k]
	}
	return fmt.Sprintf("TraceKind(%d)", int(k))
}

// Window is an interval of a run, from its start.
type Window struct {
	From, To time.Duration // the window is [From, To)
}

func (w Window) contains(t time.Duration) bool { return t >= w.From && t < w.To }

// Trace is how the resource moves over a run. Which fields mean something
// depends on Kind (see [TraceKind]).
type Trace struct {
	Kind TraceKind // what happens
	// At is when it happens, or starts (Step, Ramp, Outage, LevelShift,
	// Dip); Until is when it ends (Ramp, Outage, Dip).
	At, Until time.Duration
	// Factor multiplies capacity (Step, Ramp, Flap, Dip) or the network round trip
	// (LevelShift).
	Factor float64
	// Period is the flap's half cycle or the diurnal cycle.
	Period time.Duration
	// Amp is the diurnal amplitude, as a share of the initial capacity.
	Amp float64
	// Bursts are the slow-request windows; SlowShare of the requests sent
	// during one cost SlowCost times their usual work.
	Bursts              []Window
	SlowShare, SlowCost float64
}

// Route is one kind of request in the mix: a share of the requests, and a
// cost relative to the mix's mean (the shares' weighted mean cost is 1).
type Route struct {
	Name  string  // "health", "normal", "report", or "call" alone
	Share float64 // of the requests
	Cost  float64 // relative to the mix's mean cost
}

// Scenario is one randomly drawn (or named) run: the resource, how it moves,
// and who calls it. It is a plain value: two scenarios drawn from the same
// seed are equal (reflect.DeepEqual).
type Scenario struct {
	// Name identifies the scenario, e.g. "out-1007".
	Name string
	// About says in one line what was drawn.
	About string
	// Seed is the seed every random draw of the scenario derives from.
	Seed uint64
	// Draw draws the run's randomness again (arrivals, each request's
	// cost and delay, the clients' think times, and where the run starts
	// in the limiters' floor-probe cycle: see phase) from the same scenario:
	// how far a figure moves between draws is how much of it is luck.
	// Zero is the scenario's own draw, the one every report reads; draws
	// live in the top 16 bits of each run stream, so they are below 65536.
	Draw uint64
	// Direction says which arms run it.
	Direction Direction
	// Duration is the run's length in virtual time; arrivals stop then and
	// the calls in flight finish.
	Duration time.Duration
	// SLO is the latency an answer must beat to count as good. Limiter arms
	// get it as their SLOTarget.
	SLO time.Duration

	// Law is the service law; Servers (FIFO laws), Sigma (lognormal), Alpha
	// (Pareto) and Knee (PSKnee) are its parameters.
	Law     Law
	Servers int     // FIFO laws: servers behind the queue
	Sigma   float64 // FIFOLogNormal: the shape
	Alpha   float64 // FIFOPareto: the tail index
	Knee    int     // PSKnee: requests in service at full speed
	// Capacity0 is the initial capacity in requests per second at the mix's
	// mean cost: Servers / mean service time, or Knee / base.
	Capacity0 float64
	// Net is the initial round trip outside capacity: network, work that does
	// not contend. Each call's is Net(t) × a uniform factor in
	// [1 − NetJitter, 1 + NetJitter].
	Net       time.Duration
	NetJitter float64
	// Trace is how the resource moves during the run.
	Trace Trace
	// Routes is the request mix (one route of cost 1 when there is no mix).
	Routes []Route

	// Rate is the offered load in requests per second (open loop); Load is it
	// as a share of Capacity0 (for closed-loop clients, the load their count
	// and think time offer while unrefused).
	Rate float64 // req/s
	Load float64 // × Capacity0

	// MaxRate is the ceiling outbound limiters are promised.
	MaxRate float64
	// DeadlineMin and DeadlineMax bound each outbound caller's deadline,
	// drawn uniformly between them (equal: a fixed timeout).
	DeadlineMin, DeadlineMax time.Duration

	// MaxLimit is the ceiling inbound limiters are promised.
	MaxLimit int
	// Clients, when above zero, makes an inbound scenario closed-loop: each
	// client sends, and when admitted waits for its answer and an exponential
	// think time of mean Think; when refused it retries after a backoff drawn
	// uniformly in [BackoffMin, BackoffMax]. Zero means open-loop Poisson
	// arrivals at Rate.
	Clients    int
	Think      time.Duration // mean think time after an answer
	BackoffMin time.Duration // shortest retry backoff after a refusal
	BackoffMax time.Duration // longest retry backoff after a refusal
}

// Refuses reports whether the resource refuses every call at t.
func (sc *Scenario) Refuses(t time.Duration) bool {
	return sc.Trace.Kind == Outage && t >= sc.Trace.At && t < sc.Trace.Until
}

// rawFactor is the trace's factor on capacity at t, slow bursts aside.
func (sc *Scenario) rawFactor(t time.Duration) float64 {
	tr := &sc.Trace
	switch tr.Kind {
	case Step:
		if t >= tr.At {
			return tr.Factor
		}
	case Ramp:
		switch {
		case t >= tr.Until:
			return tr.Factor
		case t > tr.At:
			return 1 + (tr.Factor-1)*float64(t-tr.At)/float64(tr.Until-tr.At)
		}
	case Flap:
		if (t/tr.Period)%2 == 1 {
			return tr.Factor
		}
	case Diurnal:
		return 1 + tr.Amp*math.Sin(2*math.Pi*float64(t)/float64(tr.Period))
	case Dip:
		if t >= tr.At && t < tr.Until {
			return tr.Factor
		}
	}
	return 1
}

// refresh is how long a piece of a continuously moving capacity (a ramp, a
// diurnal cycle) lasts for the processor-sharing server, which serves each
// piece at the factor of its middle: 10 ms, well under any SLO drawn and
// any trace's time scale.
const refresh = 10 * time.Millisecond

// forever is the end of a piece that lasts to the end of time.
const forever = time.Duration(math.MaxInt64)

// piece returns the capacity factor the processor-sharing server works at
// from t (clamped above zero), and until when it holds: the factor moves
// only at the trace's instants (Step, Dip, Flap: exactly), or is held for
// pieces of refresh on a grid from the start (Ramp, Diurnal); end is forever
// when it never moves again.
func (sc *Scenario) piece(t time.Duration) (factor float64, end time.Duration) {
	tr := &sc.Trace
	factor, end = sc.rawFactor(t), forever
	switch tr.Kind {
	case Step:
		if t < tr.At {
			end = tr.At
		}
	case Dip:
		switch {
		case t < tr.At:
			end = tr.At
		case t < tr.Until:
			end = tr.Until
		}
	case Flap:
		end = (t/tr.Period + 1) * tr.Period
	case Ramp, Diurnal:
		lo, hi := time.Duration(0), forever // where the factor moves
		if tr.Kind == Ramp {
			lo, hi = tr.At, tr.Until
		}
		switch {
		case t < lo:
			end = lo
		case t < hi:
			from := max(lo, t/refresh*refresh)
			end = min(hi, t/refresh*refresh+refresh)
			factor = sc.rawFactor(from + (end-from)/2)
		}
	}
	return math.Max(factor, 1e-9), end
}

// slowAt returns the share of requests sent at t that are slow, and their
// cost multiplier.
func (sc *Scenario) slowAt(t time.Duration) (share, cost float64) {
	tr := &sc.Trace
	if tr.Kind != SlowBursts {
		return 0, 1
	}
	for _, w := range tr.Bursts {
		if w.contains(t) {
			return tr.SlowShare, tr.SlowCost
		}
	}
	return 0, 1
}

// Capacity returns what the resource serves at t, in requests per second of
// the mix, slow bursts included (a burst makes the mean request dearer), and
// 0 while it refuses everything. It is what the oracle paces against.
func (sc *Scenario) Capacity(t time.Duration) float64 {
	if sc.Refuses(t) {
		return 0
	}
	share, cost := sc.slowAt(t)
	return sc.Capacity0 * sc.rawFactor(t) / (1 + share*(cost-1))
}

// NetAt returns the mean round trip outside capacity at t.
func (sc *Scenario) NetAt(t time.Duration) time.Duration {
	if sc.Trace.Kind == LevelShift && t >= sc.Trace.At {
		return time.Duration(float64(sc.Net) * sc.Trace.Factor)
	}
	return sc.Net
}

// serviceMean returns the mean time one request of mean cost spends in
// service at t, unloaded (no queue, below the knee).
func (sc *Scenario) serviceMean(t time.Duration) time.Duration {
	k := float64(sc.Servers)
	if sc.Law == PSKnee {
		k = float64(sc.Knee)
	}
	return time.Duration(k / (sc.Capacity0 * math.Max(sc.rawFactor(t), 1e-9)) * float64(time.Second))
}

// UnloadedAt returns the mean latency at t of a request that finds the
// resource empty.
func (sc *Scenario) UnloadedAt(t time.Duration) time.Duration {
	return sc.serviceMean(t) + sc.NetAt(t)
}

// PeakCapacity returns the highest Capacity over the run (sampled every
// 10 ms).
func (sc *Scenario) PeakCapacity() float64 {
	peak := sc.Capacity0
	for t := time.Duration(0); t < sc.Duration; t += 10 * time.Millisecond {
		peak = math.Max(peak, sc.Capacity(t))
	}
	return peak
}

// concurrency returns the requests in flight that the resource holds at its
// initial capacity and unloaded latency: by Little's law, its knee.
func (sc *Scenario) concurrency() float64 {
	return sc.Capacity0 * sc.UnloadedAt(0).Seconds()
}

// describe fills About from the other fields.
func (sc *Scenario) describe() {
	var b strings.Builder
	switch sc.Law {
	case FIFOExp:
		fmt.Fprintf(&b, "M/M/%d", sc.Servers)
	case FIFOLogNormal:
		fmt.Fprintf(&b, "FIFO×%d lognormal σ %.2f", sc.Servers, sc.Sigma)
	case FIFOPareto:
		fmt.Fprintf(&b, "FIFO×%d Pareto α %.2f", sc.Servers, sc.Alpha)
	case PSKnee:
		fmt.Fprintf(&b, "PS knee %d", sc.Knee)
	}
	fmt.Fprintf(&b, ", %s req/s, service %s + net %s", num(sc.Capacity0), ms(sc.serviceMean(0)), ms(sc.Net))
	if sc.NetJitter > 0 {
		fmt.Fprintf(&b, " ±%.0f%%", 100*sc.NetJitter)
	}
	tr := &sc.Trace
	b.WriteString("; ")
	switch tr.Kind {
	case Constant:
		b.WriteString("constant")
	case Step:
		fmt.Fprintf(&b, "capacity ×%.2f at %s", tr.Factor, secs(tr.At))
	case Ramp:
		fmt.Fprintf(&b, "capacity ramps ×%.2f over %s–%s", tr.Factor, secs(tr.At), secs(tr.Until))
	case Flap:
		fmt.Fprintf(&b, "capacity flaps ×%.2f every %s", tr.Factor, secs(tr.Period))
	case Outage:
		fmt.Fprintf(&b, "refuses all %s–%s", secs(tr.At), secs(tr.Until))
	case Diurnal:
		fmt.Fprintf(&b, "diurnal ±%.0f%% over %s", 100*tr.Amp, secs(tr.Period))
	case LevelShift:
		fmt.Fprintf(&b, "net ×%.2f at %s (capacity unchanged)", tr.Factor, secs(tr.At))
	case Dip:
		fmt.Fprintf(&b, "capacity ×%.2f during %s–%s", tr.Factor, secs(tr.At), secs(tr.Until))
	case SlowBursts:
		fmt.Fprintf(&b, "%d slow burst(s) of %s, %.0f%% of requests ×%.0f",
			len(tr.Bursts), secs(tr.Bursts[0].To-tr.Bursts[0].From), 100*tr.SlowShare, tr.SlowCost)
	}
	if len(sc.Routes) > 1 {
		b.WriteString("; mix")
		for _, r := range sc.Routes {
			fmt.Fprintf(&b, " %s %.0f%% ×%s", r.Name, 100*r.Share, num(r.Cost))
		}
	}
	if sc.Clients > 0 {
		fmt.Fprintf(&b, "; %d closed-loop clients (think %s, backoff %s–%s), load %.2f×",
			sc.Clients, ms(sc.Think), ms(sc.BackoffMin), ms(sc.BackoffMax), sc.Load)
	} else {
		fmt.Fprintf(&b, "; offered %.2f× (%s req/s)", sc.Load, num(sc.Rate))
	}
	fmt.Fprintf(&b, "; SLO %s", ms(sc.SLO))
	if sc.Direction == Outbound {
		if sc.DeadlineMin == sc.DeadlineMax {
			fmt.Fprintf(&b, ", timeout %s", ms(sc.DeadlineMin))
		} else {
			fmt.Fprintf(&b, ", deadlines %s–%s", ms(sc.DeadlineMin), ms(sc.DeadlineMax))
		}
		fmt.Fprintf(&b, ", MaxRate %s", num(sc.MaxRate))
	} else {
		fmt.Fprintf(&b, ", MaxLimit %d", sc.MaxLimit)
	}
	fmt.Fprintf(&b, "; %s", secs(sc.Duration))
	sc.About = b.String()
}

// num prints a positive number with about three significant digits.
func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 0.1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// ms prints a duration in milliseconds, about three significant digits.
func ms(d time.Duration) string {
	return num(float64(d)/float64(time.Millisecond)) + "ms"
}

// secs prints a duration in seconds, one decimal.
func secs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
