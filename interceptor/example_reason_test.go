package interceptor_test

import (
	"encoding/json"
	"fmt"

	"github.com/iamretry/iamretry/interceptor"
)

// A Reason is written as the token the instruments use for iamretry.reason,
// in JSON as in any text encoding.
func ExampleReason_MarshalText() {
	b, err := json.Marshal(map[string]interceptor.Reason{"why": interceptor.DeadlineReached})
	fmt.Println(string(b), err)
	token, _ := interceptor.BudgetExhausted.MarshalText()
	fmt.Println(string(token))
	_, err = interceptor.Reason(200).MarshalText()
	fmt.Println(err)
	// Output:
	// {"why":"deadline"} <nil>
	// budget
	// iamretry: unknown Reason(200)
}
