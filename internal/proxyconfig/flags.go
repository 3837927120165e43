package proxyconfig

import (
	"reflect"

	"github.com/pgpoolcheck/pgpoolcheck/pooler"
	"github.com/spf13/pflag"
)

// Flags defines a flag on fs for every setting of the table (pool_size →
// --pool-size, with the table's help and default) and returns the map
// the flags given on the command line write their text into, by setting
// name: the CommandLine of Sources. A list flag given several times
// collects every value, as a StringSlice flag does.
func Flags(fs *pflag.FlagSet) map[string]string {
	given := map[string]string{}
	for _, st := range pooler.Settings() {
		fl := fs.VarPF(&flagValue{st: st, given: given}, st.FlagName(), "", st.Usage)
		if st.Kind == pooler.KindBool {
			fl.NoOptDefVal = "true"
		}
		fl.Hidden = st.Hidden
	}
	return given
}

// flagValue is the flag of one setting: it keeps the text for Load,
// which parses it as the setting does (an error there names the flag).
type flagValue struct {
	st    *pooler.Setting
	given map[string]string
}

func (f *flagValue) String() string {
	if f == nil || f.st == nil {
		return ""
	}
	if text, ok := f.given[f.st.Name]; ok {
		return text
	}
	if f.st.Default == nil || reflect.ValueOf(f.st.Default).IsZero() {
		return "" // the help shows no default
	}
	return f.st.Format(f.st.Default)
}

func (f *flagValue) Set(text string) error {
	if prev, ok := f.given[f.st.Name]; ok && isList(f.st) {
		text = prev + "," + text
	}
	f.given[f.st.Name] = text
	return nil
}

func (f *flagValue) Type() string {
	switch f.st.Kind {
	case pooler.KindInt:
		return "int"
	case pooler.KindDuration:
		return "duration"
	case pooler.KindBool:
		return "bool"
	case pooler.KindList, pooler.KindDatabases, pooler.KindPeers:
		return "strings"
	}
	return "string"
}

func isList(st *pooler.Setting) bool {
	return st.Kind == pooler.KindList || st.Kind == pooler.KindDatabases || st.Kind == pooler.KindPeers
}
