package source

// NewVerifyReader lets the external tests check the digest rules.
var NewVerifyReader = newVerifyReader
