package agiletest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
)

// roundTripper is the smallest outbound adapter that keeps the contract: the
// suite's own check that it can be passed, with nothing but the core.
type roundTripper struct {
	rt  http.RoundTripper
	lim *agilelimiter.Limiter
}

func (t roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, err := t.lim.TakeContext(r.Context()); err != nil {
		return nil, err
	}
	start := time.Now()
	resp, err := t.rt.RoundTrip(r)
	d := time.Since(start)
	if resp == nil && err == nil {
		err = fmt.Errorf("reference: RoundTripper %T returned a nil *Response with a nil error", t.rt)
	}
	switch {
	case errors.Is(err, context.Canceled):
		// the caller cancelled: dropped
	case err != nil:
		t.lim.Record(agilelimiter.ClientErrorOutcome(err), d)
	default:
		t.lim.Record(agilelimiter.ClientOutcome(resp.StatusCode, resp.Header), d)
	}
	return resp, err
}

func TestOutboundReference(t *testing.T) {
	agiletest.Outbound{Name: "reference", Client: func(lim *agilelimiter.Limiter, rt http.RoundTripper) func(*http.Request) (*http.Response, error) {
		if lim == nil {
			panic("reference: nil limiter")
		}
		return (&http.Client{Transport: roundTripper{rt, lim}}).Do
	}}.Run(t)
}
