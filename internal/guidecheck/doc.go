// Package guidecheck holds the test that keeps the guide (docs/guide)
// true: every Go snippet of its pages must appear, line for line, in a
// compiled and tested Go file of the repository (the programs of
// examples/ and store/redis/example/, and the runnable Example
// functions), so that the guide's
// code cannot rot. Lines are compared without their leading and trailing
// blanks, so a snippet may be cut from inside a function.
//
// It imports no mcpkit package.
package guidecheck
