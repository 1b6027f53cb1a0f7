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
	start func(t *testing.T) broker // stopped when t ends
}

// A broker is where a started target's clients connect. Only the
// kafkaserver command serves SSL and SASL: the other targets leave those
// listeners empty, and the suites' TLS and SASL tests skip themselves
// there.
type broker struct {
	// bootstrap is the PLAINTEXT listener's host:port (for sarama's
	// cluster, toxiproxy's API URL).
	bootstrap string
	// ssl is the SSL listener's host:port; it requires a client
	// certificate, pki's. sslRequested is a second SSL listener's, which
	// asks for one and takes a client without (ssl.client.auth=requested).
	ssl, sslRequested string
	pki               pki
	// sasl is the SASL_PLAINTEXT listener's host:port: PLAIN,
	// SCRAM-SHA-256 and SCRAM-SHA-512 for saslUser with saslPassword, and
	// OAUTHBEARER with unsecured tokens.
	sasl string
	// server and control are, for sarama's cluster, the kafkaserver
	// command's binary and its control API's host:port (-control), which
	// stop and start its brokers.
	server, control string
}

// The SASL listener's user: kafka-python's fixture's broker_user and
// broker_password, which its SASL tests log in with.
const (
	saslUser     = "alice"
	saslPassword = "alice-secret"
)

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
// the test with it, from a server.properties as Kafka's broker reads one,
// on four free loopback ports: PLAINTEXT; SSL, with a CA, server and
// client certificates made for the test (writePKI) and client
// certificates required (ssl.client.auth); SSL_REQUESTED, the same with
// client certificates requested; SASL_PLAINTEXT, with PLAIN's
// user from its JAAS setting, SCRAM's from --add-scram, and OAUTHBEARER's
// unsecured validator. Share groups may lock records for 1 s (franz-go's
// share tests wait out a lock; Kafka's minimum, 15 s, would make them
// slow).
func startKafkaServer(t *testing.T) broker {
	dir := t.TempDir()
	bin := build(t, filepath.Join(repoDir(), "examples", "kafkaserver"), filepath.Join(dir, "kafkaserver"))
	p := writePKI(t, filepath.Join(dir, "pki"))
	props := strings.Join([]string{
		"listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SSL_REQUESTED://127.0.0.1:0",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL_REQUESTED:SSL",
		"log.dirs=" + filepath.Join(dir, "kafkalite"),
		"group.share.min.record.lock.duration.ms=1000",
		"ssl.keystore.type=PEM",
		"ssl.keystore.location=" + p.serverKeystore,
		"ssl.truststore.type=PEM",
		"ssl.truststore.location=" + p.ca,
		"ssl.client.auth=required",
		"listener.name.ssl_requested.ssl.client.auth=requested",
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
		fmt.Sprintf(`listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_%s="%s";`, saslUser, saslPassword),
	}, "\n") + "\n"
	propsPath := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(propsPath, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	line := startProcessLine(t, filepath.Join(dir, "kafkaserver.log"), "kafkaserver: serving", bin, propsPath,
		"--add-scram", fmt.Sprintf("SCRAM-SHA-256=[name=%s,password=%s]", saslUser, saslPassword),
		"--add-scram", fmt.Sprintf("SCRAM-SHA-512=[name=%s,password=%s]", saslUser, saslPassword))
	b := broker{pki: p}
	for _, l := range strings.Fields(line) {
		name, addr, ok := strings.Cut(strings.TrimSuffix(l, ","), "://")
		switch {
		case !ok:
		case name == "PLAINTEXT":
			b.bootstrap = addr
		case name == "SSL":
			b.ssl = addr
		case name == "SASL_PLAINTEXT":
			b.sasl = addr
		case name == "SSL_REQUESTED":
			b.sslRequested = addr
		}
	}
	if b.bootstrap == "" || b.ssl == "" || b.sasl == "" || b.sslRequested == "" {
		t.Fatalf("kafkaserver: want PLAINTEXT, SSL, SASL_PLAINTEXT and SSL_REQUESTED listeners, the command says %q", line)
	}
	return b
}

// startKfake builds kafkacheck's kfake command (franz-go's kfake as one
// broker) and runs it on a free loopback port.
func startKfake(t *testing.T) broker {
	dir := t.TempDir()
	bin := build(t, filepath.Join(repoDir(), "internal", "testkit", "kafkacheck", "cmd", "kfake"), filepath.Join(dir, "kfake"))
	return broker{bootstrap: startProcess(t, filepath.Join(dir, "kfake.log"), "kfake: serving on", bin, "-port", "0")}
}

// startKafka starts Apache Kafka's broker as kafkacheck configures it, with
// topics created on first use as the kafkaserver command creates them,
// and share groups' 1 s locks as startKafkaServer allows them.
func startKafka(t *testing.T) broker {
	b := kafkacheck.Get(t).NewBroker(t, map[string]string{
		"auto.create.topics.enable":               "true",
		"group.share.min.record.lock.duration.ms": "1000",
	})
	b.Start()
	t.Cleanup(b.Stop)
	return broker{bootstrap: b.Bootstrap()}
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
