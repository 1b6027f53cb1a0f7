package suites

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/internal/testkit/kafkacheck"
)

// A target is a broker a suite runs against: its name on the report card
// and how to start a fresh one for a test.
type target struct {
	name  string
	start func(t *testing.T) string // returns host:port; stopped when t ends
}

var (
	kafkalite = target{name: "kafkalite", start: startKafkaServer}
	kafka     = target{name: "Kafka " + kafkacheck.Version, start: startKafka}
	kfake     = target{name: "kfake", start: startKfake}
)

// moduleDir is this module's directory.
func moduleDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// repoDir is the repository's root.
func repoDir() string { return filepath.Join(moduleDir(), "..", "..", "..") }

// startKafkaServer builds examples/kafkaserver and serves a directory of
// the test with it on a free loopback port. Share groups may lock records
// for 1 s (franz-go's share tests wait out a lock; Kafka's minimum, 15 s,
// would make them slow).
func startKafkaServer(t *testing.T) string {
	dir := t.TempDir()
	bin := build(t, filepath.Join(repoDir(), "examples", "kafkaserver"), filepath.Join(dir, "kafkaserver"))
	return listenerAddr(startProcess(t, filepath.Join(dir, "kafkaserver.log"), "kafkaserver: serving", bin,
		"-dir", filepath.Join(dir, "kafkalite"), "-listen", "127.0.0.1:0",
		"-override", "group.share.min.record.lock.duration.ms=1000"))
}

// listenerAddr is the host:port of a listener the command names as
// NAME://host:port.
func listenerAddr(l string) string {
	_, addr, _ := strings.Cut(strings.TrimSuffix(l, ","), "://")
	return addr
}

// startKfake builds kafkacheck's kfake command (franz-go's kfake as one
// broker) and runs it on a free loopback port.
func startKfake(t *testing.T) string {
	dir := t.TempDir()
	bin := build(t, filepath.Join(repoDir(), "internal", "testkit", "kafkacheck", "cmd", "kfake"), filepath.Join(dir, "kfake"))
	return startProcess(t, filepath.Join(dir, "kfake.log"), "kfake: serving on", bin, "-port", "0")
}

// startKafka starts Apache Kafka's broker as kafkacheck configures it, with
// topics created on first use as the kafkaserver command creates them,
// and share groups' 1 s locks as startKafkaServer allows them.
func startKafka(t *testing.T) string {
	b := kafkacheck.Get(t).NewBroker(t, map[string]string{
		"auto.create.topics.enable":               "true",
		"group.share.min.record.lock.duration.ms": "1000",
	})
	b.Start()
	t.Cleanup(b.Stop)
	return b.Bootstrap()
}

// build compiles the command in dir to out.
func build(t *testing.T, dir, out string) string {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", dir, err, b)
	}
	return out
}

// startProcess runs bin with args until t ends (SIGTERM, then SIGKILL after
// a minute), and returns the address at the end of the first line it
// prints, which must start with ready. Its other output goes to logPath.
func startProcess(t *testing.T, logPath, ready, bin string, args ...string) string {
	t.Helper()
	fields := strings.Fields(startProcessLine(t, logPath, ready, bin, args...))
	return fields[len(fields)-1]
}

// startProcessLine is startProcess returning the whole first line.
func startProcessLine(t *testing.T, logPath, ready, bin string, args ...string) string {
	t.Helper()
	return spawn(t, logPath, ready, bin, args...)
}

// runProcess runs bin with args until t ends, as startProcess does, all its
// output to logPath.
func runProcess(t *testing.T, logPath, bin string, args ...string) {
	t.Helper()
	spawn(t, logPath, "", bin, args...)
}

// spawn starts bin; with ready, it waits for the first line, which must
// start with ready, and returns it.
func spawn(t *testing.T, logPath, ready, bin string, args ...string) string {
	t.Helper()
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	var line string
	if ready != "" {
		line, err = r.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, ready) || len(strings.Fields(line)) == 0 {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			logf.Close()
			out, _ := os.ReadFile(logPath)
			t.Fatalf("%s did not start: %q %v\n%s", filepath.Base(bin), line, err, out)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(logf, r)
		_ = cmd.Wait()
		logf.Close()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("%s did not stop within a minute of SIGTERM", filepath.Base(bin))
		}
	})
	return line
}

// suitesDir is where .ci/suites/fetch puts the suites' sources.
func suitesDir() string {
	if d := os.Getenv("KAFKALITE_SUITES_DIR"); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "kafkalite", "suites")
}

// need skips t when path is missing, or fails it with
// KAFKALITE_CLIENTS_REQUIRED=1.
func need(t *testing.T, path, what string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("%s: %v; .ci/suites/fetch obtains it", what, err)
		if os.Getenv("KAFKALITE_CLIENTS_REQUIRED") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}
