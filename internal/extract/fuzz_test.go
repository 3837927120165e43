package extract

import "testing"

func fuzzLanguage(f *testing.F, lang Language, cases []litCase) {
	for _, c := range cases {
		f.Add([]byte(c.src))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		lits, comments, err := Literals(lang, src)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkInvariants(src, lits, comments); err != nil {
			t.Fatalf("%v\nsource: %q\nliterals: %+v", err, src, lits)
		}
	})
}

func FuzzGo(f *testing.F)         { fuzzLanguage(f, Go, goCases) }
func FuzzPython(f *testing.F)     { fuzzLanguage(f, Python, pythonCases) }
func FuzzRuby(f *testing.F)       { fuzzLanguage(f, Ruby, rubyCases) }
func FuzzJavaScript(f *testing.F) { fuzzLanguage(f, JavaScript, javascriptCases) }
func FuzzJava(f *testing.F)       { fuzzLanguage(f, Java, javaCases) }
func FuzzKotlin(f *testing.F)     { fuzzLanguage(f, Kotlin, kotlinCases) }
func FuzzElixir(f *testing.F)     { fuzzLanguage(f, Elixir, elixirCases) }
func FuzzPHP(f *testing.F)        { fuzzLanguage(f, PHP, phpCases) }
func FuzzRust(f *testing.F)       { fuzzLanguage(f, Rust, rustCases) }
func FuzzCSharp(f *testing.F)     { fuzzLanguage(f, CSharp, csharpCases) }
