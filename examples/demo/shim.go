package main

// TEMPORARY: stand-ins for nethttp/httpclient.Wrap and nethttp/httpserver.Wrap
// until they land. Delete this file then.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

type shimRT struct {
	next http.RoundTripper
	lim  *agilelimiter.Limiter
}

func limitTransport(rt http.RoundTripper, lim *agilelimiter.Limiter) http.RoundTripper {
	return shimRT{rt, lim}
}

func (s shimRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, err := s.lim.TakeContext(r.Context()); err != nil {
		return nil, err
	}
	start := time.Now()
	resp, err := s.next.RoundTrip(r)
	d := time.Since(start)
	if errors.Is(r.Context().Err(), context.Canceled) {
		return resp, err
	}
	if err != nil {
		s.lim.Record(agilelimiter.ClientErrorOutcome(err), d)
	} else {
		s.lim.Record(agilelimiter.ClientOutcome(resp.StatusCode, resp.Header), d)
	}
	return resp, err
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

func protect(h http.Handler, lim *agilelimiter.ConcurrencyLimiter) http.Handler {
	refusal := agilelimiter.NewRefusal(agilelimiter.DefaultRetryAfter)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !lim.TryTake() {
			w.Header().Set("Retry-After", refusal.RetryAfter)
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(agilelimiter.RefusalStatus)
			io.WriteString(w, refusal.Body)
			return
		}
		defer lim.Release()
		sw := &statusWriter{w, 200}
		start := time.Now()
		h.ServeHTTP(sw, r)
		lim.Record(agilelimiter.ServerOutcome(sw.status), time.Since(start))
	})
}
