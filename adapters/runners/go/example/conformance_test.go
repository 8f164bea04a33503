// The stella conformance checks in `go test`: one subtest per check.
package example

import (
	"testing"

	stellaconform "example.invalid/stella-conform/adapters/runners/go"
)

// The client graded: the repository's reference client (set STELLA_CONFORM_CLIENT to
// grade another build with the same test).
var client = []string{"python3", "../../../python/reference_client.py"}

func TestConformance(t *testing.T) {
	stellaconform.Run(t, stellaconform.Options{Client: client, Examples: 3})
}
