package suites

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	// The module requires sarama at the version whose functional tests
	// run, and toxiproxy (a tool in go.mod) for them.
	_ "github.com/IBM/sarama"

	"github.com/kafkalite/kafkalite/internal/testkit/kafkacheck"
)

// saramaSuite runs sarama's functional tests (the functional build tag)
// against five virtual brokers with replication factor 3, as sarama's
// docker-compose cluster has them, each behind a toxiproxy proxy on the
// port the tests expect (127.0.0.1:29091 to 29095, fixed in the tests).
// The tests stop and restart one broker through docker compose: a
// stand-in for docker (testdata/sarama/docker) does it through the
// command's control API (-control); the test that reads a broker's logs
// through docker compose fails, there being no container's log.
var saramaSuite = suite{name: "sarama", run: runSarama, targets: []target{kafkaliteSarama}}

// saramaPanics are tests left out because they crash the whole test
// binary against the command.
var saramaPanics = []string{}

// kafkaliteSarama is the kafkaserver command as sarama's functional tests
// need it: its bootstrap is the toxiproxy API's URL.
var kafkaliteSarama = target{name: "kafkalite", start: startSaramaCluster}

func runSarama(t *testing.T, b broker) results {
	args := []string{"test", "-tags", "functional", "-json", "-count=1", "-timeout", "20m"}
	if len(saramaPanics) > 0 {
		args = append(args, "-skip", "^("+strings.Join(saramaPanics, "|")+")$")
	}
	cmd := exec.Command("go", append(args, "github.com/IBM/sarama")...)
	cmd.Dir = moduleDir()
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Join(moduleDir(), "testdata", "sarama")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TOXIPROXY_ADDR="+b.bootstrap, "KAFKA_VERSION="+kafkacheck.Version,
		"KAFKALITE_SERVER="+b.server, "KAFKALITE_CONTROL="+b.control)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	got := parseTestJSON(out)
	if len(got) == 0 {
		t.Fatalf("go test of sarama ran no tests: %v\n%s\n%s", err, stderr.Bytes(), lastLines(out, 20))
	}
	for _, id := range saramaPanics {
		got[id] = result{outcome: notApplicable, detail: "left out: it crashes the test binary"}
	}
	return got
}

// brokerAddrRe matches the kafkaserver command's "broker ID
// PLAINTEXT://host:port" in its first line.
var brokerAddrRe = regexp.MustCompile(`broker (\d+) [A-Z_]+://([^,;\s]+)`)

// controlRe matches the command's "; control host:port".
var controlRe = regexp.MustCompile(`; control (\S+)`)

// startSaramaCluster serves five brokers (ids 1 to 5, replication factor
// 3, no topic created on use, no initial rebalance delay: sarama's
// docker-compose settings) advertising 127.0.0.1:29091 to 29095, with
// its control API, and a toxiproxy with proxies kafka1 to kafka5 from
// those ports to the brokers; the broker's bootstrap is toxiproxy's API
// URL.
func startSaramaCluster(t *testing.T) broker {
	dir := t.TempDir()
	bin := build(t, filepath.Join(repoDir(), "examples", "kafkaserver"), filepath.Join(dir, "kafkaserver"))
	line := startProcessLine(t, filepath.Join(dir, "kafkaserver.log"), "kafkaserver: serving", bin,
		"-dir", filepath.Join(dir, "kafkalite"), "-listen", "127.0.0.1:0", "-advertised", "127.0.0.1:29091",
		"-node.id", "1", "-brokers", "5", "-default.replication.factor", "3",
		"-override", "auto.create.topics.enable=false", "-override", "group.initial.rebalance.delay.ms=0",
		"-control", "127.0.0.1:0")
	cm := controlRe.FindStringSubmatch(line)
	if cm == nil {
		t.Fatalf("kafkaserver: no control address in %q", line)
	}
	type proxy struct {
		Name     string `json:"name"`
		Listen   string `json:"listen"`
		Upstream string `json:"upstream"`
		Enabled  bool   `json:"enabled"`
	}
	var proxies []proxy
	for _, m := range brokerAddrRe.FindAllStringSubmatch(line, -1) {
		var id int
		fmt.Sscan(m[1], &id)
		proxies = append(proxies, proxy{Name: fmt.Sprintf("kafka%d", id), Listen: fmt.Sprintf("127.0.0.1:%d", 29090+id), Upstream: m[2], Enabled: true})
	}
	if len(proxies) != 5 {
		t.Fatalf("kafkaserver: want 5 brokers, the command says %q", line)
	}
	cfg, err := json.Marshal(proxies)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "toxiproxy.json")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	toxi := filepath.Join(dir, "toxiproxy")
	cmd := exec.Command("go", "build", "-o", toxi, "github.com/Shopify/toxiproxy/v2/cmd/server")
	cmd.Dir = moduleDir()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building toxiproxy: %v\n%s", err, b)
	}
	port := freePort(t)
	runProcess(t, filepath.Join(dir, "toxiproxy.log"), toxi, "-host", "127.0.0.1", "-port", port, "-config", cfgPath)
	url := "http://127.0.0.1:" + port
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(url + "/proxies")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return broker{bootstrap: url, server: bin, control: cm[1]}
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(dir, "toxiproxy.log"))
			t.Fatalf("toxiproxy did not answer on %s within a minute: %v\n%s", url, err, out)
		}
	}
}

// freePort returns a loopback port nothing listened on a moment ago.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// lastLines returns out's last n lines.
func lastLines(out []byte, n int) string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
