package apirecord

import (
	"bytes"
	"fmt"
	"go/types"
	"slices"
	"strings"
)

// Lines returns the record of one package: a sorted line per exported
// constant, variable, function, type, struct field, interface method and
// method (of T or *T), each prefixed with "pkg <import path>, ".
// Unexported names appear only where an exported signature mentions them.
func Lines(pkg *types.Package) []string {
	w := writer{pkg: pkg, prefix: "pkg " + pkg.Path() + ", "}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			w.add("const %s %s = %s", name, w.typ(o.Type()), o.Val().ExactString())
		case *types.Var:
			w.add("var %s %s", name, w.typ(o.Type()))
		case *types.Func:
			w.add("func %s%s", name, w.sig(o.Signature()))
		case *types.TypeName:
			w.typeName(o)
		}
	}
	slices.Sort(w.lines)
	return slices.Compact(w.lines)
}

type writer struct {
	pkg    *types.Package
	prefix string
	lines  []string
}

func (w *writer) add(format string, args ...any) {
	w.lines = append(w.lines, w.prefix+fmt.Sprintf(format, args...))
}

// qualifier names types of this package bare and others by package name,
// as Go source does.
func (w *writer) qualifier(p *types.Package) string {
	if p == w.pkg {
		return ""
	}
	return p.Name()
}

func (w *writer) typ(t types.Type) string { return types.TypeString(t, w.qualifier) }

func (w *writer) sig(s *types.Signature) string {
	var b bytes.Buffer
	types.WriteSignature(&b, s, w.qualifier)
	return b.String()
}

func (w *writer) tparams(l *types.TypeParamList) string {
	if l.Len() == 0 {
		return ""
	}
	parts := make([]string, l.Len())
	for i := range l.Len() {
		tp := l.At(i)
		parts[i] = tp.Obj().Name() + " " + w.typ(tp.Constraint())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (w *writer) typeName(o *types.TypeName) {
	name := o.Name()
	if o.IsAlias() {
		a, _ := o.Type().(*types.Alias)
		tp := ""
		if a != nil {
			tp = w.tparams(a.TypeParams())
		}
		w.add("type %s%s = %s", name, tp, w.typ(types.Unalias(o.Type())))
		return
	}
	named, ok := o.Type().(*types.Named)
	if !ok {
		w.add("type %s %s", name, w.typ(o.Type()))
		return
	}
	head := name + w.tparams(named.TypeParams())
	switch u := named.Underlying().(type) {
	case *types.Struct:
		w.add("type %s struct", head)
		for i := range u.NumFields() {
			f := u.Field(i)
			if !f.Exported() {
				continue
			}
			if f.Embedded() {
				w.add("type %s struct, embedded %s", head, w.typ(f.Type()))
				continue
			}
			w.add("type %s struct, %s %s", head, f.Name(), w.typ(f.Type()))
		}
	case *types.Interface:
		var names []string
		for i := range u.NumMethods() {
			m := u.Method(i)
			if m.Exported() {
				names = append(names, m.Name())
			} else {
				names = append(names, "unexported methods")
			}
		}
		slices.Sort(names)
		names = slices.Compact(names)
		w.add("type %s interface { %s }", head, strings.Join(names, ", "))
		for i := range u.NumMethods() {
			m := u.Method(i)
			if m.Exported() {
				w.add("type %s interface, %s%s", head, m.Name(), w.sig(m.Signature()))
			}
		}
		for i := range u.NumEmbeddeds() {
			if e := u.EmbeddedType(i); !types.IsInterface(e) || e.Underlying().(*types.Interface).NumMethods() == 0 {
				w.add("type %s interface, embedded %s", head, w.typ(e))
			}
		}
	default:
		w.add("type %s %s", head, w.typ(u))
	}
	for i := range named.NumMethods() {
		m := named.Method(i)
		if !m.Exported() {
			continue
		}
		sig := m.Signature()
		recv := name
		if tp := named.TypeParams(); tp.Len() > 0 {
			ps := make([]string, tp.Len())
			for j := range tp.Len() {
				ps[j] = tp.At(j).Obj().Name()
			}
			recv += "[" + strings.Join(ps, ", ") + "]"
		}
		if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
			recv = "*" + recv
		}
		w.add("method (%s) %s%s", recv, m.Name(), w.sig(sig))
	}
}
