//go:build !race

package interceptor_test

const raceBuild = false
