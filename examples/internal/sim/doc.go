// Package sim holds the services and dependencies the examples protect or
// call, simulated in this process so that every example runs alone on
// loopback: [Cores], a service's processors shared by the requests in flight;
// [Pool], a connection pool handlers take from without waiting; and [Flaky],
// an HTTP dependency that fails one call in a few. [Serve] and [Listen] put
// an example's own server on a loopback port. A dependency with a FIFO queue
// of a given capacity, which can go down, is the core's agiletest.Queue, the
// one queue simulator the core's tests and compare/ use too.
//
// Each simulates the one property its example needs the limiter to see: a
// latency that rises with the load past a capacity, a refusal for lack of
// capacity, a failure. None is part of the library.
package sim
