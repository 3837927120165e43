// The C# oracle corpus (see ../csval.cs): every public field is one string
// expression, as scan's lexer should join it, and every interpolation and
// format item evaluates to P, the placeholder. It keeps to the C# that the
// Mono compiler accepts (C# 7: no raw strings, no @$ prefix, no \e, no
// line breaks inside interpolations).
#region Usings "quoted"
using System;
using System.Globalization;
using System.Text;
#endregion

namespace Oracle
{
    /// <summary>Strings; it's "quoted".</summary>
    public static class Strings
    {
        static readonly string P = "pgpoolcheck_param";
        static readonly int N = 7;
        const char Quote = '"', Apostrophe = '\'', Brace = '{', Hex = '\x22';

        // Regular strings and their escapes.
        public static readonly string S01 = "SELECT 1";
        public static readonly string S02 = "SET a = '\'' \" \\ \0 \a \b \f \n \r \t \v";
        public static readonly string S03 = "SELECT '\x41\x041\x0041\x00411' AS x";
        public static readonly string S04 = "SELECT '\u00e9\U0001F600\uD83D\uDE00' AS e";
        public static readonly string S05 = "";
        public static readonly string S06 = "SELECT 1 -- // /* */ #not a directive";
        public static readonly string S07 = "SELECT '\x7\x7f\x7ff\x7fff'";
        public static readonly string S08 = "SELECT '\x41BCDEF' AS greedy, '\u0041BC' AS four";

        // Verbatim strings.
        public static readonly string V01 = @"SELECT ""a"" \n \t";
        public static readonly string V02 = @"SELECT *
  FROM t
 WHERE a = '\'";
        public static readonly string V03 = @"";
        public static readonly string V04 = @"""";

        // Interpolated strings.
        public static readonly string I01 = $"SELECT * FROM {P} WHERE id = {P}";
        public static readonly string I02 = $"SELECT '{{}}' || {P,3} || {P:x} || {P,-5:yyyy}";
        public static readonly string I03 = $"SET search_path TO {(N > 1 ? P : "x")}, public";
        public static readonly string I04 = $"SELECT {P.Substring(0, P.Length)} FROM {$"{P}"}";
        public static readonly string I05 = $"SELECT {{{P}}} '\" {(N > 0 ? P : "}")} {(Brace == '}' ? "" : P)}'";
        public static readonly string I06 = $@"UPDATE t
   SET a = {P}, b = ""{{}}""
 WHERE c = {(N > 0 ? P : @"x""")}";
        public static readonly string I07 = $"";
        public static readonly string I08 = $"LISTEN {P}/*{P}*/ -- {P}";

        // Concatenation, with constants and fields as operands.
        public static readonly string C01 = "SELECT * " +
            "FROM t " + P + " WHERE a = @a" // the operand is a field
            + $" AND b = {P}";
        public static readonly string C02 = @"SET a = " + P;
        public static readonly string C03 = "BEGIN; " + Strings.P + "; COMMIT";

        // Composite format strings.
        public static readonly string F01 = string.Format("SELECT {0} FROM {1} WHERE a = '{{}}'", P, P);
        public static readonly string F02 = String.Format(CultureInfo.InvariantCulture, "SET a = {0,5} {1:x} {0,-3:yyyy}", P, P);
        public static readonly string F03 = string.Format(@"LISTEN ""{0}""", P);
        public static readonly string F04 = new StringBuilder().AppendFormat("NOTIFY {0}, '{{}}'", P).ToString();
    }
}
