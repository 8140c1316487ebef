// Package skilldir reads an Agent Skill that a contract serves (MCP's
// Skills extension, SEP-2640): a directory beside the contract holding a
// SKILL.md whose YAML frontmatter names and describes the skill, and any
// supporting files. Read returns what skills/list and skills/get carry
// (the frontmatter as JSON, every file with its SHA-256 digest and size),
// the one way both toolc check and the server read it: each file through
// contentfile (inside the contract's directory, no symbolic link out, a
// regular file), within the extension's limits of 512 files and 16 MiB.
package skilldir

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/toolc/toolc/internal/contentfile"
)

// The extension's limits on one skill: a host must accept a skill within
// them, and a server should serve none past them.
const (
	MaxFiles = 512
	MaxTotal = 16 << 20
)

// Manifest is the file every skill has at its root.
const Manifest = "SKILL.md"

// Skill is a skill read from its directory.
type Skill struct {
	// Frontmatter is SKILL.md's YAML frontmatter as a JSON object, with
	// every field the author wrote; Name and Description are its name
	// and description.
	Frontmatter       map[string]any
	Name, Description string
	// Files are the skill's files, SKILL.md first and the others in
	// lexical order of their paths.
	Files []File
}

// File is one file of a skill.
type File struct {
	// Path is the file's path in the skill's directory, slash-separated.
	Path string
	// Digest is "sha256:" and the hex SHA-256 of the file's bytes.
	Digest string
	Size   int64
}

// namePattern is the Agent Skills specification's rule for a skill's
// name: 1 to 64 lower-case letters, digits and hyphens, with no hyphen at
// either end and no two in a row.
var namePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)

// CheckName reports what is wrong with a skill's name, or nil.
func CheckName(name string) error {
	if !namePattern.MatchString(name) || bytes.Contains([]byte(name), []byte("--")) {
		return fmt.Errorf("skill name %q must be 1 to 64 lower-case letters, digits and hyphens, with no hyphen first, last or twice in a row (the Agent Skills specification's rule)", name)
	}
	return nil
}

// Read reads the skill in directory dir, relative to base (the contract's
// directory) and slash-separated.
func Read(base, dir string) (*Skill, error) {
	paths, err := walk(base, dir)
	if err != nil {
		return nil, err
	}
	prefix := path.Clean(dir) + "/"
	sk := &Skill{}
	var total int64
	var manifest []byte
	for _, p := range paths {
		data, err := contentfile.Read(base, p)
		if err != nil {
			return nil, err
		}
		total += int64(len(data))
		if total > MaxTotal {
			return nil, fmt.Errorf("skill directory %s holds more than %d MiB, the most a host must accept", dir, MaxTotal>>20)
		}
		sum := sha256.Sum256(data)
		f := File{Path: p[len(prefix):], Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(data))}
		if f.Path == Manifest {
			manifest = data
			sk.Files = append([]File{f}, sk.Files...)
			continue
		}
		sk.Files = append(sk.Files, f)
	}
	if manifest == nil {
		return nil, fmt.Errorf("skill directory %s has no %s at its root", dir, Manifest)
	}
	fm, err := ParseFrontmatter(manifest)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %v", path.Clean(dir), Manifest, err)
	}
	sk.Frontmatter = fm
	sk.Name, _ = fm["name"].(string)
	sk.Description, _ = fm["description"].(string)
	switch {
	case sk.Name == "":
		return nil, fmt.Errorf("%s/%s: the frontmatter has no name", path.Clean(dir), Manifest)
	case sk.Description == "":
		return nil, fmt.Errorf("%s/%s: the frontmatter has no description", path.Clean(dir), Manifest)
	}
	return sk, nil
}

// List lists the files of the skill in directory dir, relative to base,
// as Read does, with their sizes and no digests, without reading them:
// what a read of one file, or of a directory, needs to know, for the
// cost of a directory walk rather than of reading and digesting up to
// MaxTotal bytes. The limits hold by the files' sizes.
func List(base, dir string) ([]File, error) {
	paths, err := walk(base, dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(base)
	if err != nil {
		return nil, fmt.Errorf("opening the contract's directory: %v", err)
	}
	defer root.Close()
	prefix := path.Clean(dir) + "/"
	var files []File
	var total int64
	manifest := false
	for _, p := range paths {
		info, err := root.Lstat(p)
		if err != nil {
			return nil, err
		}
		if !info.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file; a skill's files are served as they are, so a symbolic link or a device is refused", p)
		}
		if total += info.Size(); total > MaxTotal {
			return nil, fmt.Errorf("skill directory %s holds more than %d MiB, the most a host must accept", dir, MaxTotal>>20)
		}
		f := File{Path: p[len(prefix):], Size: info.Size()}
		if f.Path == Manifest {
			manifest = true
			files = append([]File{f}, files...)
			continue
		}
		files = append(files, f)
	}
	if !manifest {
		return nil, fmt.Errorf("skill directory %s has no %s at its root", dir, Manifest)
	}
	return files, nil
}

// walk returns the paths of the files of the skill in directory dir,
// relative to base, in lexical order: only regular files, at most
// MaxFiles of them.
func walk(base, dir string) ([]string, error) {
	if !fs.ValidPath(path.Clean(dir)) || path.Clean(dir) == "." {
		return nil, fmt.Errorf("skill directory %q must be a slash-separated path below the contract's directory; a skill lives beside the contract", dir)
	}
	root, err := os.OpenRoot(base)
	if err != nil {
		return nil, fmt.Errorf("opening the contract's directory: %v", err)
	}
	defer root.Close()
	var paths []string
	err = fs.WalkDir(root.FS(), path.Clean(dir), func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file; a skill's files are served as they are, so a symbolic link or a device is refused", p)
		}
		if len(paths) == MaxFiles {
			return fmt.Errorf("skill directory %s holds more than %d files, the most a host must accept", dir, MaxFiles)
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		var pe *fs.PathError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("skill directory %s does not exist beside the contract", dir)
		case errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes"):
			// os.Root's words ("statat ...: path escapes from parent").
			return nil, fmt.Errorf("skill directory %s leaves the contract's directory through a symbolic link (%s); a skill lives beside the contract", dir, pe.Path)
		}
		return nil, err
	}
	return paths, nil
}

// Describe reads only the SKILL.md of the skill in directory dir,
// relative to base, and returns its frontmatter's description: what the
// compiler records of a skill, without reading and digesting every file
// as Read does.
func Describe(base, dir string) (string, error) {
	if !fs.ValidPath(path.Clean(dir)) || path.Clean(dir) == "." {
		return "", fmt.Errorf("skill directory %q must be a slash-separated path below the contract's directory", dir)
	}
	data, err := contentfile.Read(base, path.Join(path.Clean(dir), Manifest))
	if err != nil {
		return "", err
	}
	fm, err := ParseFrontmatter(data)
	if err != nil {
		return "", fmt.Errorf("%s/%s: %v", path.Clean(dir), Manifest, err)
	}
	desc, _ := fm["description"].(string)
	return desc, nil
}

// frontmatter is a YAML block between two "---" lines at the start of a
// file (after a byte-order mark, if any).
var frontmatter = regexp.MustCompile(`^\x{FEFF}?---\r?\n((?s:.*?))\r?\n---[ \t]*(?:\r?\n|$)`)

// ParseFrontmatter returns the YAML frontmatter of a SKILL.md as a JSON
// object: mappings become objects, sequences arrays, and scalars strings,
// numbers, booleans or null by their YAML tags (a timestamp stays the
// text it was written as).
func ParseFrontmatter(data []byte) (map[string]any, error) {
	m := frontmatter.FindSubmatch(data)
	if m == nil {
		return nil, errors.New("the file does not begin with YAML frontmatter between two --- lines")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(m[1], &doc); err != nil {
		return nil, fmt.Errorf("the frontmatter is not YAML: %v", err)
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("the frontmatter is empty")
	}
	v, err := jsonOf(doc.Content[0], 0)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the frontmatter is not a YAML mapping")
	}
	return obj, nil
}

// maxDepth bounds the nesting of a frontmatter value.
const maxDepth = 32

func jsonOf(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("the frontmatter nests deeper than %d levels", maxDepth)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return nil, fmt.Errorf("line %d: the frontmatter uses a YAML alias, which a skill's frontmatter has no need of", n.Line)
	case yaml.MappingNode:
		obj := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a frontmatter key must be a string", k.Line)
			}
			v, err := jsonOf(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			obj[k.Value] = v
		}
		return obj, nil
	case yaml.SequenceNode:
		arr := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := jsonOf(c, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		return arr, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, err
			}
			return b, nil
		case "!!int":
			if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
				return i, nil
			}
			var f float64
			if err := n.Decode(&f); err != nil {
				return n.Value, nil
			}
			return f, nil
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil {
				return n.Value, nil
			}
			return f, nil
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("line %d: unexpected YAML in the frontmatter", n.Line)
}
