// Package kafkacheck makes Apache Kafka the judge of kafkalite's format
// claims: its tests resolve a real Kafka with Maven, run its own tools
// (DumpLogSegments) over directories kafkalite writes, run a single-node
// KRaft broker that writes directories kafkalite must read and serves
// partitions kafkalite wrote, and compare what each side reads record by
// record.
//
// It is a nested, test-only module (like internal/testkit/interop), so that the
// library's module keeps its four dependencies and `go test ./...` at the
// root does not need Java. Its tests skip with a message when java, javac
// or mvn is missing; with KAFKALITE_KAFKA_REQUIRED=1 (as .ci/run sets it)
// they fail instead.
//
// Kafka is resolved once per machine into a cache directory
// (KAFKALITE_KAFKA_CACHE, default the user cache directory's
// kafkalite/kafka-<version>) by `mvn dependency:copy-dependencies` over
// testdata/pom.xml: nothing is downloaded but through Maven. The client
// cases Kafka's tools cannot express are a small Java program,
// testdata/java/KafkaCheck.java, compiled with javac against those jars
// into the same cache.
package kafkacheck

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Version is the Apache Kafka release the harness runs, unless
// KAFKALITE_KAFKA_VERSION names another 4.x release.
const Version = "4.4.0"

// Kafka is a resolved Apache Kafka: its jars, a JVM, and the compiled
// client helper.
type Kafka struct {
	Version string
	java    string
	lib     string // directory of the jars
	classes string // directory of KafkaCheck.class
}

var (
	resolveOnce sync.Once
	resolved    *Kafka
	resolveErr  error
)

// Get returns the resolved Kafka, resolving it on the first call of the
// test binary. It skips t when Java or Maven is not installed, unless
// KAFKALITE_KAFKA_REQUIRED=1, and fails t when resolution fails.
func Get(t testing.TB) *Kafka {
	t.Helper()
	resolveOnce.Do(func() { resolved, resolveErr = resolve() })
	var missing *missingToolError
	switch {
	case errors.As(resolveErr, &missing) && os.Getenv("KAFKALITE_KAFKA_REQUIRED") != "1":
		t.Skipf("kafkacheck: %v; install Java 17+ and Maven to run the checks against Apache Kafka (KAFKALITE_KAFKA_REQUIRED=1 makes this a failure)", resolveErr)
	case resolveErr != nil:
		t.Fatalf("kafkacheck: %v", resolveErr)
	}
	return resolved
}

type missingToolError struct{ tool string }

func (e *missingToolError) Error() string { return e.tool + " is not on PATH" }

func resolve() (*Kafka, error) {
	version := Version
	if v := os.Getenv("KAFKALITE_KAFKA_VERSION"); v != "" {
		version = v
	}
	tools := map[string]string{}
	for _, name := range []string{"java", "javac", "mvn"} {
		p, err := exec.LookPath(name)
		if err != nil {
			return nil, &missingToolError{tool: name}
		}
		tools[name] = p
	}
	cache := os.Getenv("KAFKALITE_KAFKA_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			// No $XDG_CACHE_HOME or $HOME (a bare CI account): the
			// temporary directory, which later runs on the machine share.
			base = os.TempDir()
		}
		cache = filepath.Join(base, "kafkalite", "kafka-"+version)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, err
	}
	unlock, err := lockDir(cache)
	if err != nil {
		return nil, err
	}
	defer unlock()
	pom, err := os.ReadFile(filepath.Join(moduleDir(), "testdata", "pom.xml"))
	if err != nil {
		return nil, err
	}
	// The jars are kept by the pom's hash: a changed pom resolves anew.
	sum := sha256.Sum256(pom)
	k := &Kafka{Version: version, java: tools["java"], lib: filepath.Join(cache, "lib-"+hex.EncodeToString(sum[:8]))}
	if err := k.copyDependencies(tools["mvn"], cache); err != nil {
		return nil, err
	}
	if err := k.compileHelper(tools["javac"], cache); err != nil {
		return nil, err
	}
	return k, nil
}

// lockDir takes an exclusive lock on dir/.lock, so that test binaries
// running at once resolve the cache one at a time.
func lockDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// moduleDir is the directory of this package's source, where testdata is.
func moduleDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// copyDependencies resolves Kafka's jars with Maven into k.lib (a directory
// named by the pom's hash), once: a complete copy is marked by .complete.
func (k *Kafka) copyDependencies(mvn, cache string) error {
	if _, err := os.Stat(filepath.Join(k.lib, ".complete")); err == nil {
		return nil
	}
	tmp := k.lib + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	// Two tries: a download cut short by the network is taken again from
	// where Maven's local repository stopped.
	for try := range 2 {
		cmd := exec.Command(mvn, "-q", "-B", "-f", filepath.Join(moduleDir(), "testdata", "pom.xml"),
			"-Dkafka.version="+k.Version, "dependency:copy-dependencies", "-DoutputDirectory="+tmp)
		out, err := cmd.CombinedOutput()
		if err == nil {
			break
		}
		if try == 1 {
			return fmt.Errorf("resolving Apache Kafka %s with Maven: %w\n%s", k.Version, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(k.lib); err != nil {
		return err
	}
	return os.Rename(tmp, k.lib)
}

// compileHelper compiles testdata/java/KafkaCheck.java against the jars
// into a directory named by the source's hash, once.
func (k *Kafka) compileHelper(javac, cache string) error {
	src := filepath.Join(moduleDir(), "testdata", "java", "KafkaCheck.java")
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	k.classes = filepath.Join(cache, "classes-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(k.classes, "KafkaCheck.class")); err == nil {
		return nil
	}
	tmp := k.classes + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	cmd := exec.Command(javac, "-nowarn", "-d", tmp, "-cp", filepath.Join(k.lib, "*"), src)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("compiling %s: %w\n%s", src, err, out)
	}
	return os.Rename(tmp, k.classes)
}

// classpath is the JVM class path: the helper's classes, then the jars.
func (k *Kafka) classpath() string {
	return k.classes + string(os.PathListSeparator) + filepath.Join(k.lib, "*")
}

// javaCommand returns a JVM running class with args. Tools and the client
// start with the first JIT tier only: they run for a second, not long
// enough for the optimizing compiler to pay off.
func (k *Kafka) javaCommand(ctx context.Context, class string, args ...string) *exec.Cmd {
	jvm := []string{"-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
		"-Dlog4j2.configurationFile=" + filepath.Join(moduleDir(), "testdata", "log4j2-tools.properties"),
		"-cp", k.classpath(), class}
	return exec.CommandContext(ctx, k.java, append(jvm, args...)...)
}

// Measure runs a Kafka tool as Kafka's perf-test scripts do (-Xmx512M,
// G1, every JIT tier) to completion and returns its standard output; a
// non-zero exit fails t.
func (k *Kafka) Measure(t testing.TB, class string, args ...string) string {
	t.Helper()
	out, _ := k.MeasureUsage(t, class, args...)
	return out
}

// MeasureUsage is Measure that also returns what the tool's process used.
func (k *Kafka) MeasureUsage(t testing.TB, class string, args ...string) (string, Usage) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	jvm := []string{"-Xmx512m", "-XX:+UseG1GC",
		"-Dlog4j2.configurationFile=" + filepath.Join(moduleDir(), "testdata", "log4j2-tools.properties"),
		"-cp", k.classpath(), class}
	cmd := exec.CommandContext(ctx, k.java, append(jvm, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kafkacheck: %s %s: %v\nstdout:\n%s\nstderr:\n%s", class, strings.Join(args, " "), err, tail(stdout.String()), tail(stderr.String()))
	}
	return stdout.String(), UsageOf(cmd.ProcessState)
}

// Usage is what a process used: its peak resident memory in bytes and
// its CPU time (user and system); zero where the system does not say.
type Usage struct {
	PeakRSS int64
	CPU     time.Duration
}

// UsageOf is the usage of a process that ended, from its rusage (whose
// peak is in kilobytes on Linux).
func UsageOf(ps *os.ProcessState) Usage {
	u := Usage{CPU: ps.UserTime() + ps.SystemTime()}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		u.PeakRSS = int64(ru.Maxrss) * 1024
	}
	return u
}

// Run runs a Kafka class to completion with stdin and returns its standard
// output; a non-zero exit fails t with the output of both streams.
func (k *Kafka) Run(t testing.TB, stdin, class string, args ...string) string {
	t.Helper()
	out, err := k.run(stdin, class, args...)
	if err != nil {
		t.Fatalf("kafkacheck: %s %s: %v", class, strings.Join(args, " "), err)
	}
	return out
}

func (k *Kafka) run(stdin, class string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := k.javaCommand(ctx, class, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w\nstdout:\n%s\nstderr:\n%s", err, tail(stdout.String()), tail(stderr.String()))
	}
	return stdout.String(), nil
}

// tail keeps the last 60 lines of s, for failure messages.
func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 60 {
		lines = append([]string{"..."}, lines[len(lines)-60:]...)
	}
	return strings.Join(lines, "\n")
}

// DumpLogSegments runs Kafka's DumpLogSegments tool with args and returns
// what it printed.
func (k *Kafka) DumpLogSegments(t testing.TB, args ...string) string {
	t.Helper()
	return k.Run(t, "", "org.apache.kafka.tools.DumpLogSegments", args...)
}

// Client runs a command of the KafkaCheck helper against bootstrap and
// returns its output lines, the final "ok" removed.
func (k *Kafka) Client(t testing.TB, stdin string, command, bootstrap string, args ...string) []string {
	t.Helper()
	out := k.Run(t, stdin, "KafkaCheck", append([]string{command, bootstrap}, args...)...)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || lines[len(lines)-1] != "ok" {
		t.Fatalf("kafkacheck: KafkaCheck %s did not finish:\n%s", command, tail(out))
	}
	return lines[:len(lines)-1]
}

// Broker is a single-node KRaft broker (combined controller and broker)
// on loopback, over a log directory the test owns.
type Broker struct {
	k         *Kafka
	t         testing.TB
	Dir       string // the log directory (log.dirs)
	clusterID string
	port      int
	ctrlPort  int
	extra     map[string]string
	logFile   string

	cmd  *exec.Cmd
	done chan error
}

// NewBroker formats a log directory for a broker with the given server
// properties on top of the harness's (small segments are the caller's to
// ask for) and returns it, not started. The broker is killed, if still
// running, when the test ends.
func (k *Kafka) NewBroker(t testing.TB, props map[string]string) *Broker {
	t.Helper()
	root := t.TempDir()
	b := &Broker{k: k, t: t, Dir: filepath.Join(root, "kafka-logs"), extra: props,
		logFile: filepath.Join(root, "broker.log"), port: freePort(t), ctrlPort: freePort(t)}
	uuid := strings.TrimSpace(lastLine(k.Run(t, "", "kafka.tools.StorageTool", "random-uuid")))
	b.clusterID = uuid
	b.writeConfig(t)
	k.Run(t, "", "kafka.tools.StorageTool", "format", "-t", b.clusterID, "-c", b.configFile())
	t.Cleanup(func() {
		if b.cmd != nil {
			_ = b.cmd.Process.Kill()
			<-b.done
		}
	})
	return b
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (b *Broker) configFile() string { return filepath.Join(filepath.Dir(b.Dir), "server.properties") }

// Properties returns the broker's server properties.
func (b *Broker) Properties() map[string]string {
	p := map[string]string{
		"process.roles":                            "broker,controller",
		"node.id":                                  "1",
		"controller.quorum.voters":                 fmt.Sprintf("1@127.0.0.1:%d", b.ctrlPort),
		"listeners":                                fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", b.port, b.ctrlPort),
		"advertised.listeners":                     fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", b.port),
		"controller.listener.names":                "CONTROLLER",
		"listener.security.protocol.map":           "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"inter.broker.listener.name":               "PLAINTEXT",
		"log.dirs":                                 b.Dir,
		"num.partitions":                           "1",
		"offsets.topic.replication.factor":         "1",
		"offsets.topic.num.partitions":             "1",
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
		"transaction.state.log.num.partitions":     "1",
		"group.initial.rebalance.delay.ms":         "0",
		"auto.create.topics.enable":                "false",
	}
	for k, v := range b.extra {
		p[k] = v
	}
	return p
}

func (b *Broker) writeConfig(t testing.TB) {
	t.Helper()
	var buf strings.Builder
	for k, v := range b.Properties() {
		fmt.Fprintf(&buf, "%s=%s\n", k, v)
	}
	if err := os.WriteFile(b.configFile(), []byte(buf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Bootstrap is the broker's bootstrap.servers.
func (b *Broker) Bootstrap() string { return fmt.Sprintf("127.0.0.1:%d", b.port) }

// Log returns what the broker logged so far (all its runs).
func (b *Broker) Log() string {
	out, _ := os.ReadFile(b.logFile)
	return string(out)
}

// Start starts the broker and waits until it serves clients.
func (b *Broker) Start() {
	b.t.Helper()
	if b.cmd != nil {
		b.t.Fatal("kafkacheck: broker already running")
	}
	b.launch("-Xmx1g")
	if _, err := b.k.run("", "KafkaCheck", "ready", b.Bootstrap()); err != nil {
		b.Kill()
		b.t.Fatalf("kafkacheck: the broker did not come up: %v\nbroker log:\n%s", err, tail(b.Log()))
	}
}

// Stop shuts the broker down cleanly (SIGTERM) and waits for it: its
// partitions are flushed and it writes its clean-shutdown marker.
func (b *Broker) Stop() {
	b.t.Helper()
	b.stop(syscall.SIGTERM, 2*time.Minute)
}

// Kill stops the broker with SIGKILL, as a crash does.
func (b *Broker) Kill() {
	b.t.Helper()
	b.stop(syscall.SIGKILL, time.Minute)
}

func (b *Broker) stop(sig syscall.Signal, wait time.Duration) {
	b.t.Helper()
	if b.cmd == nil {
		return
	}
	_ = b.cmd.Process.Signal(sig)
	select {
	case err := <-b.done:
		b.cmd = nil
		var exit *exec.ExitError
		if sig == syscall.SIGTERM && err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 143) {
			b.t.Fatalf("kafkacheck: the broker exited with %v\nbroker log:\n%s", err, tail(b.Log()))
		}
	case <-time.After(wait):
		_ = b.cmd.Process.Kill()
		<-b.done
		b.cmd = nil // reaped: the cleanup must not wait for it again
		b.t.Fatalf("kafkacheck: the broker did not stop within %v\nbroker log:\n%s", wait, tail(b.Log()))
	}
	b.cmd = nil
}

// Usage is what the running broker used since it started: its peak
// resident memory and its CPU time (readProcStats); zero where there are
// no such files.
func (b *Broker) Usage() Usage {
	if b.cmd == nil {
		return Usage{}
	}
	ps := readProcStats(b.cmd.Process.Pid)
	return Usage{PeakRSS: ps.peakRSS, CPU: ps.cpu}
}

// procStats is what a running process used so far: its CPU time, its
// peak resident memory and its resident memory now, in bytes.
type procStats struct {
	cpu          time.Duration
	peakRSS, rss int64
}

// readProcStats reads a running process's procStats from Linux's /proc:
// VmHWM and VmRSS of /proc/PID/status, utime and stime of /proc/PID/stat;
// zero where there are no such files.
func readProcStats(pid int) procStats {
	var ps procStats
	proc := fmt.Sprintf("/proc/%d/", pid)
	if status, err := os.ReadFile(proc + "status"); err == nil {
		for _, l := range strings.Split(string(status), "\n") {
			name, v, ok := strings.Cut(l, ":")
			if !ok || (name != "VmHWM" && name != "VmRSS") {
				continue
			}
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				continue
			}
			if name == "VmHWM" {
				ps.peakRSS = kb * 1024
			} else {
				ps.rss = kb * 1024
			}
		}
	}
	if stat, err := os.ReadFile(proc + "stat"); err == nil {
		// The fields after the command's closing parenthesis: utime and
		// stime are the 12th and 13th, in clock ticks (100 a second on
		// Linux's usual USER_HZ).
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
			f := strings.Fields(string(stat[i+1:]))
			if len(f) > 12 {
				ut, err1 := strconv.ParseInt(f[11], 10, 64)
				st, err2 := strconv.ParseInt(f[12], 10, 64)
				if err1 == nil && err2 == nil {
					ps.cpu = time.Duration(ut+st) * 10 * time.Millisecond
				}
			}
		}
	}
	return ps
}

// Running reports whether the broker process is running.
func (b *Broker) Running() bool { return b.cmd != nil }

// Lines splits tab-separated output lines that start with prefix into
// their fields (the prefix removed).
func Lines(lines []string, prefix string) [][]string {
	var out [][]string
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if f[0] == prefix {
			out = append(out, f[1:])
		}
	}
	return out
}

// scanLines returns the lines of s.
func scanLines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
