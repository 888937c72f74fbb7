package kubectl

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"
)

// column is a table column: its header (upper-cased when printed) and type.
type column struct {
	name, kind string
}

// table is what a list command prints: a header and one row per object.
type table struct {
	columns []column
	rows    []metav1.TableRow
}

// add appends a row for obj.
func (t *table) add(obj runtime.Object, cells ...any) {
	t.rows = append(t.rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: obj}})
}

// print writes the table as kubectl does, with a NAMESPACE column first
// when withNamespace.
func (t *table) print(k *kit, withNamespace bool) error {
	defs := make([]metav1.TableColumnDefinition, len(t.columns))
	for i, c := range t.columns {
		defs[i] = metav1.TableColumnDefinition{Name: c.name, Type: c.kind}
	}
	defs[0].Format = "name"
	w := printers.GetNewTabWriter(k.opts.Out)
	p := printers.NewTablePrinter(printers.PrintOptions{WithNamespace: withNamespace})
	if err := p.PrintObj(&metav1.Table{ColumnDefinitions: defs, Rows: t.rows}, w); err != nil {
		return fmt.Errorf("printing the table: %w", err)
	}
	return w.Flush()
}

// age is kubectl's rendering of how long ago t was.
func age(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// noResources tells, on stderr, that nothing matched, as kubectl does.
func noResources(k *kit, namespaced, allNamespaces bool, namespace string) {
	if namespaced && !allNamespaces {
		fmt.Fprintf(k.opts.Err, "No resources found in %s namespace.\n", namespace)
		return
	}
	fmt.Fprintln(k.opts.Err, "No resources found")
}
