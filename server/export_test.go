package server

// Codes is every error code, for the docs' test.
var Codes = codes
