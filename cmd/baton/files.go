package main

import (
	"errors"
	"fmt"
	"io/fs"
)

// fileKind names what a file that is not a regular file is, for messages;
// "" when it has no plainer name.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return ""
}

// notRegular says that what (the file, named) is not a regular file, and
// what it is instead when that has a name.
func notRegular(what string, m fs.FileMode) error {
	if k := fileKind(m); k != "" {
		return fmt.Errorf("%s is not a regular file: it is %s", what, k)
	}
	return fmt.Errorf("%s is not a regular file", what)
}

// pathErr is err without the "open PATH: " the os package puts in front,
// for messages that name the path themselves.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
