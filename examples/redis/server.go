package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"time"
)

// server is a redis-server this program started on a loopback port, to
// stop and start again.
type server struct {
	bin  string
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// startServer starts redis-server on a free loopback port, without
// persistence, and returns once it answers PING.
func startServer() (*server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &server{bin: bin, port: port}
	return s, s.start()
}

func (s *server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// start runs the process on s.port and waits up to 5 s for its PONG.
func (s *server) start() error {
	s.cmd = exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--loglevel", "warning")
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(s.cmd, s.done)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		select {
		case <-s.done:
			return fmt.Errorf("redis-server exited at start (is port %d taken?)", s.port)
		default:
		}
		if ping(s.addr()) == nil {
			return nil
		}
	}
	s.stop()
	return errors.New("redis-server did not answer PING within 5 s")
}

// stop kills the process at once, as a crash would, and waits for it.
func (s *server) stop() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

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
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "+PONG\r\n" {
		return fmt.Errorf("no PONG: %q %v", line, err)
	}
	return nil
}
