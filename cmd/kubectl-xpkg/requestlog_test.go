package main

import "regexp"

var requestLine = regexp.MustCompile(`"Response" verb="(\w+)" url="https://[^/]+(/[^"?]*)`)

// apiRequests are the requests a -v=6 run logged, discovery left out.
func apiRequests(stderr string) []string {
	var out []string
	for _, m := range requestLine.FindAllStringSubmatch(stderr, -1) {
		if m[2] == "/api" || m[2] == "/apis" || regexp.MustCompile(`^/apis?/[^/]+(/[^/]+)?$`).MatchString(m[2]) {
			continue // discovery, answered from the cache on later runs
		}
		out = append(out, m[1]+" "+m[2])
	}
	return out
}
