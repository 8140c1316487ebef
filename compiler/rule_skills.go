package compiler

import (
	"fmt"

	"github.com/toolc/toolc/diag"
	"github.com/toolc/toolc/internal/skilldir"
)

var skillShape = shape{what: "skill", keys: map[string]keySpec{
	"dir": {kinds: str},
}}

// skillDir is the directory of a skill, relative to its contract's: dir,
// or skills/NAME.
func skillDir(n *node) string {
	if d := stringAt(n, "dir"); d != "" {
		return d
	}
	return "skills/" + n.label
}

// skillRule checks skills: the name, and the directory as the server will
// serve it, with the one reader both use (skilldir): a SKILL.md whose
// frontmatter has the skill's name and a description, every file inside
// the contract's directory (no "..", no symbolic link), within the
// extension's 512 files and 16 MiB.
var skillRule = &Rule{
	ID:       "skill",
	Doc:      "skills: a name by the Agent Skills rules; a directory beside the contract with a SKILL.md whose frontmatter has that name and a description; regular files inside the contract's directory, at most 512 and 16 MiB",
	Severity: diag.Error,
	Check: func(p *Pass) {
		for e := range p.entries("skills") {
			n := e.node
			where := fmt.Sprintf("skill %q", n.label)
			if err := skilldir.CheckName(n.label); err != nil {
				p.reportf(n.pos, "%v", err)
				continue
			}
			if !entryStruct(p, n, where, fmt.Sprintf("a struct such as {dir: \"skills/%s\"}", n.label), skillShape) {
				continue
			}
			pos := n.pos
			if d := n.get("dir"); d != nil {
				if d.kind != kString {
					continue
				}
				pos = d.pos
			}
			sk, err := skilldir.Read(e.pkg.Dir, skillDir(n))
			switch {
			case err != nil:
				p.reportf(pos, "%s: %v", where, err)
			case sk.Name != n.label:
				p.reportf(pos, "%s: the frontmatter of its SKILL.md names it %q; a skill's name is its key, its directory's name in its URI and its frontmatter's name, all one", where, sk.Name)
			}
		}
	},
}
