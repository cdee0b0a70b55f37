package extract

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckNew: anything at the path is refused, and says what it is;
// only a path that names nothing passes. It writes nothing.
func TestCheckNew(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	link, dangling := filepath.Join(dir, "link"), filepath.Join(dir, "dangling")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nothing"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, what string }{
		{file, "a file"}, {dir, "a directory"}, {os.DevNull, "a device"},
		{link, "a symbolic link"}, {dangling, "a symbolic link"},
	} {
		var exists *ExistsError
		if err := CheckNew(tc.path); !errors.As(err, &exists) || exists.What != tc.what || exists.Path != tc.path {
			t.Errorf("CheckNew(%s) = %v, want it to exist as %s", tc.path, err, tc.what)
		}
	}
	if err := CheckNew(filepath.Join(dir, "new.yaml")); err != nil {
		t.Errorf("a new path: %v", err)
	}
	if err := CheckNew(filepath.Join(file, "below")); err == nil {
		t.Error("a path below a file passed")
	}
}

// TestCreateNewFileNeverReplaces: what another writer puts at the path
// while the new file is written is kept, and the staged content goes;
// an aborted file (Ctrl-C) leaves nothing.
func TestCreateNewFileNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "backup.yaml")
	f, err := CreateNewFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("ours\n"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("theirs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var exists *ExistsError
	if err := f.Commit(); !errors.As(err, &exists) {
		t.Errorf("commit over a file written meanwhile: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "theirs\n" {
		t.Errorf("the other writer's file is now %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left beside it: %v", entries)
	}

	path = filepath.Join(dir, "aborted.yaml")
	if f, err = CreateNewFile(path); err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("half")
	f.Abort()
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("an aborted file left %v", entries)
	}

	path = filepath.Join(dir, "new.yaml")
	if f, err = CreateNewFile(path); err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("whole\n")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "whole\n" {
		t.Errorf("committed %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("after a commit: %v", entries)
	}
	if _, err := CreateNewFile(path); !errors.As(err, &exists) {
		t.Errorf("CreateNewFile over a file: %v", err)
	}
}
