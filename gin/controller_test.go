package agilegin_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agilegin "github.com/agilelimiter/agilelimiter/gin"
	"github.com/gin-gonic/gin"
)

// These tests run the limiter's controller against the adapter: inside a
// synctest bubble (virtual time, httptest.NewRecorder) to see where the limit
// goes, and outside one (a real server) to check the accounting under -race.

const (
	clients   = 60
	work      = 10 * time.Millisecond // every handler takes this long
	think     = 10 * time.Millisecond // a client's pause between requests
	floodTime = 3 * time.Second       // 30 controller ticks
)

// flood sends requests for target from clients concurrent clients for
// floodTime of virtual time, and returns how many got each status.
func flood(h http.Handler, target string) map[int]int {
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	end := time.Now().Add(floodTime)
	for range clients {
		wg.Go(func() {
			for time.Now().Before(end) {
				w := serve(h, http.MethodGet, target)
				mu.Lock()
				codes[w.Code]++
				mu.Unlock()
				time.Sleep(think)
			}
		})
	}
	wg.Wait()
	return codes
}

// items answers /items/ok with 200 and /items/missing with 404, both after
// the same work, so the two arms differ only in the status.
func items(lim *agilelimiter.ConcurrencyLimiter, opts ...agilegin.Option) *gin.Engine {
	r := gin.New()
	r.Use(agilegin.Limit(lim, opts...))
	r.GET("/items/:id", func(c *gin.Context) {
		time.Sleep(work)
		if c.Param("id") != "ok" {
			c.String(http.StatusNotFound, "no such item")
			return
		}
		c.String(http.StatusOK, "item")
	})
	r.GET("/shed", func(c *gin.Context) {
		time.Sleep(work)
		c.AbortWithStatus(http.StatusServiceUnavailable) // a pool ran dry
	})
	return r
}

func TestFlood404DoesNotRaiseLimitWhile200sDo(t *testing.T) {
	const initial = 8
	cfg := agilelimiter.ConcurrencyConfig{MaxLimit: 64, InitialLimit: initial}
	// reachedAll is the naive verdict this adapter must not be: every status is
	// a latency sample. It shows the 404 flood is heavy enough to move the
	// limit if it were counted.
	reachedAll := func(agilelimiter.Exchange) agilelimiter.Outcome { return agilelimiter.Reached }
	for _, tc := range []struct {
		name   string
		target string
		opts   []agilegin.Option
		want   int // 0: the limit stays at initial; 1: it rises
		status int
	}{
		{"404s", "/items/missing", nil, 0, http.StatusNotFound},
		{"200s", "/items/ok", nil, 1, http.StatusOK},
		{"404s read as samples", "/items/missing", []agilegin.Option{agilegin.WithVerdict(reachedAll)}, 1, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim := agilelimiter.NewConcurrency(cfg)
				lim.Start()
				defer lim.Stop()
				codes := flood(items(lim, tc.opts...), tc.target)
				if codes[tc.status] == 0 || codes[agilelimiter.RefusalStatus] == 0 {
					t.Fatalf("statuses %v: want both %d and refusals (the limit must be reached)", codes, tc.status)
				}
				got := lim.Limit()
				switch {
				case tc.want == 0 && got != initial:
					t.Errorf("limit after the flood = %d; want it to stay at %d (statuses %v)", got, initial, codes)
				case tc.want == 1 && got < 4*initial:
					t.Errorf("limit after the flood = %d; want at least %d (statuses %v)", got, 4*initial, codes)
				}
			})
		})
	}
}

func TestHandler503sDriveLimitToMinimum(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// SLOTarget anchors the Unreachable outcomes: with no SLO and no
		// latency sample yet they would have nothing to be above.
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{
			MinLimit: 2, MaxLimit: 64, InitialLimit: 32, SLOTarget: 100 * time.Millisecond,
		})
		lim.Start()
		defer lim.Stop()
		codes := flood(items(lim), "/shed")
		if codes[http.StatusServiceUnavailable] == 0 {
			t.Fatalf("statuses %v: want the handler's 503s", codes)
		}
		if got := lim.Limit(); got != 2 {
			t.Errorf("limit after a flood of 503s = %d; want MinLimit 2 (statuses %v)", got, codes)
		}
	})
}

// TestConcurrentClientsKeepAccounting runs 50 clients against a real server
// with every path mixed: plain, 404, error, panic under recovery, and
// HandleContext. The limit is pinned (MinLimit = MaxLimit) so that "in flight
// never above the limit" is an invariant; the controller still runs, so its
// ticks race with the requests.
func TestConcurrentClientsKeepAccounting(t *testing.T) {
	const limit = 8
	lim := fixed(limit)
	lim.Start()
	defer lim.Stop()

	var running, peak, over atomic.Int64
	enter := func() func() {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if lim.InFlight() > lim.Limit() {
			over.Add(1)
		}
		time.Sleep(time.Millisecond)
		return func() { running.Add(-1) }
	}
	r := gin.New()
	r.Use(gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, _ any) { c.AbortWithStatus(500) }))
	r.Use(agilegin.Limit(lim), renderErrors)
	r.GET("/ok", func(c *gin.Context) { defer enter()(); c.String(http.StatusOK, "ok") })
	r.GET("/err", func(c *gin.Context) { defer enter()(); _ = c.Error(errDB) })
	r.GET("/panic", func(c *gin.Context) { defer enter()(); panic("boom") })
	r.GET("/old", func(c *gin.Context) { c.Request.URL.Path = "/ok"; r.HandleContext(c) })
	r.NoRoute(func(c *gin.Context) { defer enter()(); c.Status(http.StatusNotFound) })

	srv := httptest.NewServer(r)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 50}}
	defer client.CloseIdleConnections()

	paths := []string{"/ok", "/err", "/panic", "/old", "/missing"}
	var codes [600]atomic.Int64
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			for j := range 40 {
				resp, err := client.Get(srv.URL + paths[(i+j)%len(paths)])
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				codes[resp.StatusCode].Add(1)
			}
		})
	}
	wg.Wait()

	if p := peak.Load(); p > limit || over.Load() != 0 {
		t.Errorf("peak handlers at once %d, requests that saw InFlight > Limit %d; want ≤ %d and 0", p, over.Load(), limit)
	}
	if codes[200].Load() == 0 || codes[429].Load() == 0 || codes[500].Load() == 0 || codes[404].Load() == 0 {
		t.Errorf("200: %d, 404: %d, 429: %d, 500: %d; want every kind", codes[200].Load(), codes[404].Load(), codes[429].Load(), codes[500].Load())
	}
	if n := lim.InFlight(); n != 0 {
		t.Errorf("InFlight = %d after every client finished; want 0", n)
	}
	if s := lim.Stats(); s.Admitted+s.RejectedOverload != 50*40 {
		t.Errorf("admitted %d + refused %d = %d; want one decision per request, %d", s.Admitted, s.RejectedOverload,
			s.Admitted+s.RejectedOverload, 50*40)
	}
}
