// Writes the oracle for TestCSharpOracle: the value of every public static
// string field of the types of a compiled assembly, in declaration order,
// one per line as NAME<tab>BASE64 of the value's UTF-8 bytes (a lone
// surrogate becomes U+FFFD). The corpus files initialise each field with
// one string expression, whose interpolations and format items use
// P = "pgpoolcheck_param", so a value is what scan's lexer should give.
//
//   mcs -target:library -out:strings.dll csharp/Strings.cs
//   mcs -out:csval.exe csval.cs && mono csval.exe strings.dll
using System;
using System.Reflection;
using System.Text;

static class CsVal
{
    static int Main(string[] args)
    {
        var utf8 = new UTF8Encoding(false);
        var types = Assembly.LoadFrom(args[0]).GetTypes();
        Array.Sort(types, (a, b) => a.MetadataToken.CompareTo(b.MetadataToken));
        foreach (var type in types)
        {
            var fields = type.GetFields(BindingFlags.Public | BindingFlags.Static);
            Array.Sort(fields, (a, b) => a.MetadataToken.CompareTo(b.MetadataToken));
            foreach (var f in fields)
            {
                if (f.FieldType != typeof(string))
                    continue;
                var v = (string)f.GetValue(null);
                Console.WriteLine(f.Name + "\t" + Convert.ToBase64String(utf8.GetBytes(v)));
            }
        }
        return 0;
    }
}
