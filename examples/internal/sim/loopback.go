package sim

import (
	"net"
	"net/http"
)

// Serve serves h on a loopback port and returns its base URL
// ("http://127.0.0.1:port") and a func that closes the server. It panics if
// no loopback port can be had: an example cannot run without one.
func Serve(h http.Handler) (url string, stop func()) {
	ln, url := Listen()
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	return url, func() { srv.Close() }
}

// Listen returns a listener on a loopback port and its base URL, for a
// server that is not an http.Handler (fiber). It panics if no loopback port
// can be had.
func Listen() (net.Listener, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	return ln, "http://" + ln.Addr().String()
}
