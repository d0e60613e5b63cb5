// Package archtest holds one test: the import rules of the whole module
// (which package may import which), checked on every package so that the
// layering the docs describe is the layering the code has. It has no code.
package archtest
