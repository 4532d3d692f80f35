package fleet_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// needRedis is how a test that needs Redis gives up without it: a skip
// naming what to run, or, in CI, a failure.
func needRedis(t testing.TB, why string) {
	t.Helper()
	msg := why + ": the fleet tests need Redis. Install redis-server (apt-get install redis-server), " +
		"start one (redis-server --port 6390 --save '' --appendonly no) and run " +
		"REDIS_ADDR=localhost:6390 go test ./... in fleet/, or run .ci/run"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// client returns a client of the Redis at REDIS_ADDR.
func client(t testing.TB) *redis.Client {
	t.Helper()
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		needRedis(t, "REDIS_ADDR is not set")
	}
	return dial(t, addr)
}

func dial(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		needRedis(t, fmt.Sprintf("no Redis answers at %s (%v)", addr, err))
	}
	return c
}

// uniqueKey names a bucket or budget no other test run uses.
func uniqueKey(t testing.TB) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return t.Name() + "-" + hex.EncodeToString(b[:])
}

// server is a throw-away redis-server of a test's own, which the test may
// stop, pause and start again on the same port.
type server struct {
	t    testing.TB
	port int
	dir  string
	cmd  *exec.Cmd
}

func startServer(t testing.TB) *server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		needRedis(t, "redis-server is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &server{t: t, port: port, dir: t.TempDir()}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

func (s *server) start() {
	s.t.Helper()
	s.cmd = exec.Command("redis-server", "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir,
		"--logfile", filepath.Join(s.dir, "redis.log"))
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	for range 200 {
		c, err := net.DialTimeout("tcp", s.addr(), 50*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.t.Fatalf("redis-server on %s did not start", s.addr())
}

func (s *server) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // a paused server cannot end
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

func (s *server) pause()  { _ = s.cmd.Process.Signal(syscall.SIGSTOP) }
func (s *server) resume() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }
