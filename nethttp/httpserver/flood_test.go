package httpserver_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/nethttp/httpserver"
)

// A client chooses its requests; it must not choose everyone's limit. Thirty
// clients call a 20 ms route while, for two seconds, ten connections flood a
// 50 µs route that answers 200. The cheap answers far outnumber the real
// ones, but they hold few slots: the controller reads the latency slots
// see, so the flood neither drags the floor down (which would read every
// normal request as a queue and cut the limit to the floor) nor reads as a
// fast, healthy service. Default configuration, no SLO.
func TestCheapFloodMovesNobodysLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 64})
		lim.Start()
		defer lim.Stop()
		h := httpserver.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/cheap" {
				time.Sleep(50 * time.Microsecond)
			} else {
				time.Sleep(20 * time.Millisecond)
			}
		}), lim)

		const (
			floodFrom, floodTo = 2 * time.Second, 4 * time.Second
			end                = 20 * time.Second
		)
		start := time.Now()
		type count struct{ sent, refused atomic.Int64 }
		var during, after count
		var cheap atomic.Int64
		var wg sync.WaitGroup
		for range 30 {
			wg.Go(func() {
				for time.Since(start) < end {
					at := time.Since(start)
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/orders/1", nil))
					refused := rec.Code == agilelimiter.RefusalStatus
					if refused {
						time.Sleep(10 * time.Millisecond) // a refused client backs off
					}
					if at < floodFrom {
						continue
					}
					c := &after
					if at < floodTo {
						c = &during
					}
					c.sent.Add(1)
					if refused {
						c.refused.Add(1)
					}
				}
			})
		}
		for range 10 {
			wg.Go(func() {
				time.Sleep(floodFrom)
				for time.Since(start) < floodTo {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/cheap", nil))
					if rec.Code == http.StatusOK {
						cheap.Add(1)
					} else {
						time.Sleep(time.Millisecond)
					}
				}
			})
		}
		wg.Wait()

		st := lim.Stats()
		share := func(c *count) float64 { return float64(c.refused.Load()) / float64(max(c.sent.Load(), 1)) }
		t.Logf("flood: %d cheap answers in %v; legitimate requests refused: %.2f%% of %d during, %.2f%% of %d after; limit %v, floor %v",
			cheap.Load(), floodTo-floodFrom, 100*share(&during), during.sent.Load(), 100*share(&after), after.sent.Load(), st.Limit, st.Baseline)
		if cheap.Load() < 10*during.sent.Load() {
			t.Fatalf("the flood sent %d cheap requests against %d legitimate ones: not a flood", cheap.Load(), during.sent.Load())
		}
		if s := share(&during); s > 0.02 {
			t.Errorf("%.1f%% of legitimate requests refused during the flood, want ≤ 2%%", 100*s)
		}
		if s := share(&after); s > 0.02 {
			t.Errorf("%.1f%% of legitimate requests refused after the flood, want ≤ 2%%", 100*s)
		}
		// The floor is the normal route's: the cheap answers outnumbered
		// it, but a normal request is not a queue over them.
		if st.Baseline < 10*time.Millisecond {
			t.Errorf("floor %v after the flood: the cheap route's, not the 20ms one's", st.Baseline)
		}
	})
}
