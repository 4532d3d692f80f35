package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/steadfast-go/steadfast/bench/quota"
)

// redisServer is a throw-away redis-server of the outage run's own, which
// it stops and starts again, empty, on the same port.
type redisServer struct {
	port int
	dir  string
	cmd  *exec.Cmd
}

func startRedis() (*redisServer, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, errors.New("the outage run starts a redis-server of its own: install redis-server")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir, err := os.MkdirTemp("", "bench-redis-")
	if err != nil {
		return nil, err
	}
	s := &redisServer{port: port, dir: dir}
	return s, s.start()
}

func (s *redisServer) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

func (s *redisServer) start() error {
	s.cmd = exec.Command("redis-server", "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--logfile", filepath.Join(s.dir, "redis.log"))
	if err := s.cmd.Start(); err != nil {
		return err
	}
	for range 200 {
		if c, err := net.DialTimeout("tcp", s.addr(), 50*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("redis-server on %s did not start", s.addr())
}

func (s *redisServer) stop() {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

func (s *redisServer) close() {
	s.stop()
	os.RemoveAll(s.dir)
}

// quietRedis drops go-redis's own log lines (a dial that failed, while the
// outage run has its Redis stopped on purpose).
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// outage runs the shared limiter under uneven load while its Redis is
// stopped at a third of the run and started again, empty, at two thirds,
// and prints the run second by second.
func outage(ctx context.Context, w io.Writer, sc quota.Scenario) (quota.Result, error) {
	s, err := startRedis()
	if err != nil {
		return quota.Result{}, err
	}
	defer s.close()
	redis.SetLogger(quietRedis{})
	from, to := sc.Run/3, 2*sc.Run/3
	var restartErr error
	sc.Fault = func(start time.Time) {
		time.Sleep(time.Until(start.Add(from)))
		s.stop()
		time.Sleep(time.Until(start.Add(to)))
		restartErr = s.start()
	}
	r, err := quota.Run(ctx, sc, quota.Shared(s.addr()), quota.Loads[1])
	if err = errors.Join(err, restartErr); err != nil {
		return r, err
	}
	fmt.Fprintf(w, "\nRedis stopped from %v to %v and started again empty; shared (Redis) limiter, uneven load; "+
		"per second at the provider (the quota allows %.0f tokens a second):\n\n", from, to, sc.Quota)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	var sec, served, req, thr strings.Builder
	sec.WriteString("second\t")
	served.WriteString("tokens served\t")
	req.WriteString("requests\t")
	thr.WriteString("answered 429\t")
	var requests, throttled int64
	for i, x := range r.Seconds {
		fmt.Fprintf(&sec, "%d\t", i)
		fmt.Fprintf(&served, "%d\t", x.Tokens)
		fmt.Fprintf(&req, "%d\t", x.Requests)
		fmt.Fprintf(&thr, "%d\t", x.Throttled)
		requests, throttled = requests+x.Requests, throttled+x.Throttled
	}
	for _, line := range []*strings.Builder{&sec, &served, &req, &thr} {
		fmt.Fprintln(tw, line.String())
	}
	if err := tw.Flush(); err != nil {
		return r, err
	}
	worst := 0.0
	for _, x := range r.Seconds {
		if x.Requests > 0 {
			worst = max(worst, float64(x.Throttled)/float64(x.Requests))
		}
	}
	fmt.Fprintf(w, "\n429s: %.2f %% of %d requests, worst second %.1f %%; quota used after the warm-up: %.1f %%\n",
		100*float64(throttled)/float64(max(requests, 1)), requests, 100*worst, 100*r.QuotaUsed())
	return r, nil
}
