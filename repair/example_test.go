package repair_test

import (
	"fmt"

	"github.com/steadfast-go/steadfast/repair"
)

func ExampleJSON() {
	out, ok := repair.JSON("Sure! Here it is:\n```json\n{'city': 'Lyon', days: 3,}\n```")
	fmt.Println(out, ok)
	_, ok = repair.JSON(`{"answer": "`) // cut before any content: no answer to make
	fmt.Println(ok)
	// Output:
	// {"city":"Lyon","days":3} true
	// false
}

func ExampleToolName() {
	tools := []string{"get_weather", "get_forecast", "send_email"}
	fmt.Println(repair.ToolName("getWeather", tools))
	fmt.Println(repair.ToolName("functions.send_email", tools))
	fmt.Println(repair.ToolName("delete_account", tools))
	// Output:
	// get_weather true
	// send_email true
	//  false
}
