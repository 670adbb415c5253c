package workload

import (
	"os"
	"strconv"
	"strings"
)

// CPUSeconds is the user and system CPU time of process pid, in seconds
// (utime and stime of /proc/<pid>/stat, at USER_HZ = 100), or 0 when it
// cannot be read.
func CPUSeconds(pid int) float64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}
