package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-xpkg/kubectl-xpkg/hack/bench/internal/measure"
)

// Running the plans: once with -v=6 to check the plan and count its
// requests, then measured.

// planRefused is the exit status of a plan with blocking findings
// (exit.PlanRefused), with --dry-run too.
const planRefused = 3

// finding is what the checks compare of a plan's finding.
type finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Object   string `json:"object,omitempty"`
	Count    *int64 `json:"count,omitempty"`
}

func (f finding) String() string {
	s := f.Rule + "/" + f.Severity
	if f.Object != "" {
		s += " " + f.Object
	}
	if f.Count != nil {
		s += fmt.Sprintf(" (%d)", *f.Count)
	}
	return s
}

// planExpect is what a plan must say: for each rule named, exactly these
// findings (a nil Count matches any); rules not named are not checked.
type planExpect struct {
	to    string // the plan's "to", when not ""
	rules map[string][]finding
	exit  int
}

// planCommand is one plan the benchmark checks and measures.
type planCommand struct {
	label string   // as the tables name it
	args  []string // after the binary, before the cluster flags
	want  planExpect
	// Filled in by check and the measurement.
	res, list measure.Result
	reqs      map[string]int
	found     []finding
	null      bool // "findings": null
}

func one(n int64) *int64 { return &n }

// runTimed runs a command with a deadline and returns its output and
// exit status; running past the deadline is an error.
func runTimed(d time.Duration, bin string, args ...string) (stdout, stderr []byte, code int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	c.WaitDelay = 10 * time.Second
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err = c.Run()
	if ctx.Err() != nil {
		return nil, nil, 0, fmt.Errorf("%s %s: ran past -plan-timeout %s", bin, strings.Join(args, " "), d)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.Bytes(), errOut.Bytes(), exit.ExitCode(), nil
	}
	return out.Bytes(), errOut.Bytes(), 0, err
}

// check runs the plan once with -v=6, checks its exit status and
// findings against what the cluster holds, and counts its requests.
func (c *planCommand) check(bin string, timeout time.Duration, flags []string) error {
	args := append(append(slices.Clone(c.args), flags...), "-v=6")
	stdout, stderr, code, err := runTimed(timeout, bin, args...)
	if err != nil {
		return err
	}
	if code != c.want.exit {
		return fmt.Errorf("kubectl-xpkg %s: exit status %d, want %d; stderr:\n%s", strings.Join(c.args, " "), code, c.want.exit, lastLines(stderr, 20))
	}
	if c.found, c.null, err = checkPlan(stdout, c.want); err != nil {
		return fmt.Errorf("kubectl-xpkg %s: %w", strings.Join(c.args, " "), err)
	}
	c.reqs = countRequests(parseCalls(string(stderr)))
	return nil
}

// logsCRDReads guards the request counts: the plans of a provider and
// its wait read CRDs, so a log without such requests does not show them
// all.
func logsCRDReads(n map[string]int, what string) error {
	if crdReads(n) == 0 {
		return fmt.Errorf("%s logged no request that reads CRDs at -v=6: its requests cannot be counted from the log", what)
	}
	return nil
}

// checkPlan compares a plan's JSON with what it must say.
func checkPlan(out []byte, want planExpect) ([]finding, bool, error) {
	var doc struct {
		To       string          `json:"to"`
		Findings json.RawMessage `json:"findings"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, false, fmt.Errorf("the plan is no JSON document: %w", err)
	}
	var found []finding
	if err := json.Unmarshal(doc.Findings, &found); err != nil {
		return nil, false, fmt.Errorf("findings: %w", err)
	}
	if want.to != "" && doc.To != want.to {
		return nil, false, fmt.Errorf("the plan goes to %q, want %q", doc.To, want.to)
	}
	for rule, exp := range want.rules {
		var got []finding
		for _, f := range found {
			if f.Rule == rule {
				got = append(got, f)
			}
		}
		if !sameFindings(got, exp) {
			return nil, false, fmt.Errorf("%s findings: got %v, want %v (all findings: %v)", rule, got, exp, found)
		}
	}
	return found, string(doc.Findings) == "null", nil
}

// sameFindings compares findings as sets, a nil expected Count matching
// any.
func sameFindings(got, want []finding) bool {
	if len(got) != len(want) {
		return false
	}
	left := slices.Clone(got)
	for _, w := range want {
		i := slices.IndexFunc(left, func(g finding) bool {
			return g.Severity == w.Severity && g.Object == w.Object && (w.Count == nil || g.Count != nil && *g.Count == *w.Count)
		})
		if i < 0 {
			return false
		}
		left = slices.Delete(left, i, i+1)
	}
	return true
}

// lastLines is the end of a command's stderr, for an error message.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// summary counts the findings by rule, for the report.
func summary(fs []finding) string {
	if len(fs) == 0 {
		return "none"
	}
	n := map[string]int{}
	var rules []string
	for _, f := range fs {
		if n[f.Rule] == 0 {
			rules = append(rules, f.Rule)
		}
		n[f.Rule]++
	}
	slices.Sort(rules)
	for i, r := range rules {
		if n[r] > 1 {
			rules[i] = fmt.Sprintf("%s ×%d", r, n[r])
		}
	}
	return strings.Join(rules, ", ")
}

// timed runs a measured command under coreutils timeout, so that a plan
// that hangs fails the benchmark instead of holding it for ever. Its peak
// RSS is the command's: wait4 reports the largest of a process and the
// children it waited for.
func timed(timeoutBin string, d time.Duration, ok []int, bin string, args ...string) measure.Command {
	return measure.Command{OK: ok, Bin: timeoutBin,
		Args: append([]string{"--kill-after=10s", fmt.Sprintf("%ds", int(d.Seconds())), bin}, args...)}
}

// timeoutError names -plan-timeout when timeout(1) ended a command.
func timeoutError(err error, d time.Duration) error {
	if err != nil && strings.Contains(err.Error(), "exit status 124") {
		return fmt.Errorf("a command ran past -plan-timeout %s: %w", d, err)
	}
	return err
}

// call is one API request of a -v=6 log.
type call struct{ verb, path, query string }

// responseCall is client-go's line per request at -v=6, query included.
var responseCall = regexp.MustCompile(`"Response" verb="(\w+)" url="https?://[^/"]+(/[^"?]*)(?:\?([^"]*))?"`)

func parseCalls(stderr string) []call {
	var out []call
	for _, m := range responseCall.FindAllStringSubmatch(stderr, -1) {
		out = append(out, call{verb: m[1], path: m[2], query: m[3]})
	}
	return out
}

// The classes of requests the tables count.
const (
	reqDiscovery = "discovery"
	reqCRDGet    = "CRD GET"
	reqCRDList   = "CRD LIST"
	reqCRDWatch  = "CRD WATCH"
	reqPkg       = "pkg.crossplane.io"
	reqList      = "other LIST"
	reqGet       = "other GET"
	reqOther     = "other"
)

var requestClasses = []string{reqCRDGet, reqCRDList, reqCRDWatch, reqPkg, reqList, reqGet, reqOther, reqDiscovery}

// classify sorts a request into a class: reads of CRDs by verb, package
// API requests, other reads (the counts of live objects among them,
// events), anything else.
func classify(c call) string {
	if isDiscovery(c.path) {
		return reqDiscovery
	}
	group, resource, name := splitAPIPath(c.path)
	op := c.verb
	if op == "GET" {
		q, _ := url.ParseQuery(c.query)
		switch {
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			op = "WATCH"
		case name == "":
			op = "LIST"
		}
	}
	switch {
	case group == "apiextensions.k8s.io" && resource == "customresourcedefinitions" && op != "POST" && op != "PUT" && op != "PATCH" && op != "DELETE":
		return "CRD " + op
	case group == "pkg.crossplane.io":
		return reqPkg
	case op == "LIST":
		return reqList
	case op == "GET":
		return reqGet
	}
	return reqOther
}

// isDiscovery tells /api, /api/v1, /apis, /apis/GROUP[/VERSION] and
// /openapi/...: discovery, not /api/v1/RESOURCE (discoveryPath takes
// /api/v1/events for discovery).
func isDiscovery(path string) bool {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch segs[0] {
	case "api":
		return len(segs) <= 2
	case "apis":
		return len(segs) <= 3
	case "openapi", "version":
		return true
	}
	return false
}

// splitAPIPath reads group, resource and name from an API path.
func splitAPIPath(path string) (group, resource, name string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		segs = segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		group, segs = segs[1], segs[3:]
	default:
		return "", "", ""
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		segs = segs[2:]
	}
	if len(segs) > 0 {
		resource = segs[0]
	}
	if len(segs) > 1 {
		name = segs[1]
	}
	return group, resource, name
}

func countRequests(calls []call) map[string]int {
	n := map[string]int{}
	for _, c := range calls {
		n[classify(c)]++
	}
	return n
}

// crdReads is how many requests read CRDs.
func crdReads(n map[string]int) int { return n[reqCRDGet] + n[reqCRDList] + n[reqCRDWatch] }
