package lock

import "github.com/toolc/toolc/catalog"

// Catalog returns the lock's services as a catalog, for what needs more
// than the stable surface, such as toolc diff's count of tokens. A lock
// made by FromCatalog (from a catalog file, or from the contracts at a git
// revision) returns those services as they were compiled, and exact is
// true. A lock read from a file returns what it records: no examples, no
// strict or deprecated marks, and fields and enums in the lock's order,
// not the contract's; compare such a catalog with one that went through
// a lock too, FromCatalog(c).Strip().Catalog().
func (l *Lock) Catalog() (c *catalog.Catalog, exact bool) {
	c = &catalog.Catalog{Services: []*catalog.Service{}}
	if l.source != nil {
		keep := map[[2]string]bool{}
		for _, s := range l.Services {
			keep[[2]string{s.Name, s.Dir}] = true
		}
		for _, s := range l.source.Services {
			if keep[[2]string{s.Name, s.Dir}] {
				c.Services = append(c.Services, s)
			}
		}
		return c, true
	}
	for _, s := range l.Services {
		cs := &catalog.Service{Name: s.Name, Version: s.Version, Dir: s.Dir, Pos: s.Pos, Tools: []*catalog.Tool{}}
		for _, t := range s.Tools {
			ct := &catalog.Tool{
				Name:        t.Name,
				MCPName:     t.MCPName,
				Title:       t.Title,
				Description: t.Description,
				Request:     t.Request.catalog(),
				Scopes:      t.Scopes,
				Task:        t.Task,
				Pos:         t.Pos,
			}
			if t.Annotations != nil {
				ct.Annotations = *t.Annotations
			}
			if t.Response != nil {
				m := t.Response.catalog()
				ct.Response = &m
			}
			cs.Tools = append(cs.Tools, ct)
		}
		c.Services = append(c.Services, cs)
	}
	return c, false
}

// Strip returns the lock as if it had been read from a file: without the
// catalog that FromCatalog made it from.
func (l *Lock) Strip() *Lock {
	out := *l
	out.source = nil
	return &out
}

func (m *Message) catalog() catalog.Message {
	out := catalog.Message{Description: m.Description, Fields: []*catalog.Field{}, Pos: m.Pos}
	for _, f := range m.Fields {
		out.Fields = append(out.Fields, &catalog.Field{
			Name: f.Name, Type: f.Type, Items: f.Items, Description: f.Description,
			Required: f.Required, Default: f.Default, Enum: f.Enum,
			MinLength: f.MinLength, MaxLength: f.MaxLength, Pattern: f.Pattern, Format: f.Format,
			Minimum: f.Minimum, Maximum: f.Maximum, ExclusiveMinimum: f.ExclusiveMinimum, ExclusiveMaximum: f.ExclusiveMaximum,
			MinItems: f.MinItems, MaxItems: f.MaxItems, UniqueItems: f.UniqueItems,
			Pos: f.Pos,
		})
	}
	return out
}
