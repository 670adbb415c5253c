package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
)

// procRow is a load result with the CPU of the processes named by
// load -pids.
type procRow struct {
	row
	TaskPolls float64 `json:"task_polls"`
	LoadUtil  float64 `json:"load_cpu_util"`
	Procs     []struct {
		Name     string  `json:"name"`
		CPUPer1k float64 `json:"cpu_s_per_1k"`
		CPUUtil  float64 `json:"cpu_util"`
	} `json:"procs"`
}

// printProcs prints one table line per run of the multi-instance and
// gateway scripts: the configuration (the load's -server label), the
// throughput and latency, and each process's CPU-ms per operation and
// share of a core. CPU-s per 1k operations is CPU-ms per operation.
func printProcs(path string) {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Println("| config | workload | mode | ops/s | p50 ms | p99 ms | errors | CPU-ms per op (share of a core) |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		var r procRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Server == "" {
			continue
		}
		var ps []string
		for _, p := range r.Procs {
			ps = append(ps, fmt.Sprintf("%s %.4f (%.0f%%)", p.Name, p.CPUPer1k, 100*p.CPUUtil))
		}
		if r.LoadUtil > 0 {
			ps = append(ps, fmt.Sprintf("load generator %.0f%% of a core", 100*r.LoadUtil))
		}
		if r.TaskPolls > 0 {
			ps = append(ps, fmt.Sprintf("tasks/get polls per task %.2f", r.TaskPolls))
		}
		mode := r.Mode
		if r.Mode == "open" {
			mode = fmt.Sprintf("open %.0f/s", r.Rate)
		}
		fmt.Printf("| %s | %s | %s | %.0f | %.2f | %.2f | %d | %s |\n", r.Server, r.Workload, mode, r.RPS, r.P50, r.P99, r.Errors, strings.Join(ps, ", "))
	}
}
