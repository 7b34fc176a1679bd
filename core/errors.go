package agilelimiter

import "errors"

// ErrOverloaded is returned by [ConcurrencyLimiter.Do] when every slot is taken.
// fn did not run. HTTP adapters answer it with 429 and Retry-After; a gRPC server
// answers ResourceExhausted.
var ErrOverloaded = errors.New("agilelimiter: overloaded: concurrency limit reached")

// ErrDeadline is wrapped by the error [Limiter.TakeContext] and [Limiter.DoContext]
// return when the next slot would come after the context's deadline, less the
// round trip the call itself needs (the last tick's p99). The call was
// refused locally, at once, without waiting and without consuming a slot: the
// dependency never saw it, so a circuit breaker should not count it as the
// dependency's failure.
var ErrDeadline = errors.New("agilelimiter: next slot leaves no round trip before the context deadline")
