package redisstore

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuMeter reports CPU per operation, which a busy machine distorts far
// less than wall-clock rates: this process's (servers, proxy and
// clients together) and redis-server's (INFO cpu).
type cpuMeter struct {
	proc, redis time.Duration
}

func startCPU(b *testing.B) cpuMeter {
	b.Helper()
	return cpuMeter{procCPU(), redisCPU(b)}
}

// report adds proc-µs/op and redis-µs/op to b's results.
func (m cpuMeter) report(b *testing.B, n int) {
	b.Helper()
	if n == 0 {
		return
	}
	proc, red := procCPU()-m.proc, redisCPU(b)-m.redis
	b.ReportMetric(float64(proc.Microseconds())/float64(n), "proc-µs/op")
	b.ReportMetric(float64(red.Microseconds())/float64(n), "redis-µs/op")
}

func procCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// redisCPU is redis-server's CPU time so far (used_cpu_user + sys).
func redisCPU(b *testing.B) time.Duration {
	b.Helper()
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatalf("INFO cpu: %q", line)
			}
			total += f
		}
	}
	return time.Duration(total * float64(time.Second))
}
