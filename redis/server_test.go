package agileredis_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The tests run against a real redis-server: AGILELIMITER_REDIS_ADDR if set,
// else one this binary starts on a free loopback port (TestMain stops it).
// Without either they fail under CI=true and skip, loudly, elsewhere.

var (
	sharedOnce sync.Once
	shared     *server // started by this binary; nil when external
	sharedAddr string
	sharedErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.stop()
	}
	os.Exit(code)
}

// redisAddr returns the address of the Redis the tests share, starting it
// on first use.
func redisAddr(t testing.TB) string {
	t.Helper()
	sharedOnce.Do(func() {
		if addr := os.Getenv("AGILELIMITER_REDIS_ADDR"); addr != "" {
			sharedAddr = addr
			return
		}
		shared, sharedErr = startServer(0)
		if sharedErr == nil {
			sharedAddr = shared.addr()
		}
	})
	if sharedErr != nil {
		unavailable(t, sharedErr)
	}
	return sharedAddr
}

// ownServer starts a redis-server of the test's own, to stop and restart;
// it is stopped at the end of the test.
func ownServer(t *testing.T) *server {
	t.Helper()
	if os.Getenv("AGILELIMITER_REDIS_ADDR") != "" && os.Getenv("CI") != "true" {
		if _, err := exec.LookPath("redis-server"); err != nil {
			t.Skip("this test stops and restarts a redis-server of its own; AGILELIMITER_REDIS_ADDR is shared, and no redis-server is installed")
		}
	}
	s, err := startServer(0)
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(s.stop)
	return s
}

func unavailable(t testing.TB, err error) {
	t.Helper()
	msg := fmt.Sprintf("no Redis to test against (%v): install redis-server (the Debian package redis-server) "+
		"or set AGILELIMITER_REDIS_ADDR to a server's host:port", err)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	fmt.Fprintln(os.Stderr, "!!! SKIPPING:", msg)
	t.Skip(msg)
}

// server is a redis-server process on a loopback port.
type server struct {
	port int
	mu   sync.Mutex
	cmd  *exec.Cmd
	out  *bytes.Buffer
}

func (s *server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// startServer starts redis-server on port (0: a free one, retried if another
// process takes it first) and returns once it answers PING.
func startServer(port int) (*server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	var last error
	for range 5 {
		p := port
		if p == 0 {
			if p, err = freePort(); err != nil {
				return nil, err
			}
		}
		s := &server{port: p}
		if last = s.run(bin); last == nil {
			return s, nil
		}
		if port != 0 {
			break
		}
	}
	return nil, last
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// run starts the process on s.port and waits up to 5 s for its PONG.
func (s *server) run(bin string) error {
	out := new(bytes.Buffer)
	cmd := exec.Command(bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--loglevel", "warning")
	cmd.Stdout, cmd.Stderr = out, out
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("redis-server on port %d exited: %s", s.port, bytes.TrimSpace(out.Bytes()))
		default:
		}
		if ping(s.addr()) == nil {
			s.mu.Lock()
			s.cmd, s.out = cmd, out
			s.mu.Unlock()
			go func() { <-exited; s.mu.Lock(); s.cmd = nil; s.mu.Unlock() }()
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	<-exited
	return fmt.Errorf("redis-server on port %d did not answer PING within 5s: %s", s.port, bytes.TrimSpace(out.Bytes()))
}

// ping sends PING over a raw connection and expects +PONG.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return errors.New("unexpected answer to PING: " + line)
	}
	return nil
}

// kill stops the process at once (SIGKILL) and waits until it is gone.
func (s *server) kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	for range 500 {
		s.mu.Lock()
		gone := s.cmd == nil
		s.mu.Unlock()
		if gone {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// signal sends sig (SIGSTOP, SIGCONT) to the process.
func (s *server) signal(sig os.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return errors.New("redis-server is not running")
	}
	return s.cmd.Process.Signal(sig)
}

// restart starts the server again on the same port.
func (s *server) restart() error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return err
	}
	return s.run(bin)
}

func (s *server) stop() { s.kill() }

// newClient returns a go-redis client for addr, closed at the end of the
// test: its default options, so Redis calls ignore their contexts'
// deadlines on the wire and the gate's own watchdog is what bounds them.
func newClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// uniqueKey is a quota key no other test (or run, on a shared server) uses.
func uniqueKey(t testing.TB) string {
	return "agileredis-test:" + t.Name() + ":" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// maxInWindow returns the most instants of ts in any window [t, t+w)
// beginning at one of them (which is the most in any window at all), and
// where that window begins. ts is sorted.
func maxInWindow(ts []time.Time, w time.Duration) (int, time.Time) {
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	best, at := 0, time.Time{}
	j := 0
	for i := range ts {
		for j < len(ts) && ts[j].Sub(ts[i]) < w {
			j++
		}
		if j-i > best {
			best, at = j-i, ts[i]
		}
	}
	return best, at
}

// countIn counts the instants of ts in [from, to).
func countIn(ts []time.Time, from, to time.Time) int {
	n := 0
	for _, t := range ts {
		if !t.Before(from) && t.Before(to) {
			n++
		}
	}
	return n
}

// recorder collects admission instants from many goroutines.
type recorder struct {
	mu sync.Mutex
	ts []time.Time
}

func (r *recorder) add(t time.Time) {
	r.mu.Lock()
	r.ts = append(r.ts, t)
	r.mu.Unlock()
}

func (r *recorder) all() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ts)
}

// allowed is the most admissions a one-second window may hold under a
// quota of quota calls a second: 5% over.
func allowed(quota float64) int { return int(1.05 * quota) }
