// String constants for TestRustOracle: each is one string expression that
// rustc evaluates; the lexer must find it as one literal with the same
// value. Included into a generated main.rs, which prints the values.

pub const PLAIN: &str = "SELECT 1";
pub const ESCAPES: &str = "tab\there\nnewline \\ backslash \"quote\" 'single' \0 nul";
pub const HEX: &str = "\x41\x7f lock";
pub const UNICODE: &str = "caf\u{e9} \u{1F600} \u{000041} \u{1_F6_0_0}";
pub const CONTINUED: &str = "SELECT pg_advisory_lock(1) \
                             FROM jobs \
    WHERE id = $1";
pub const MULTILINE: &str = "LISTEN jobs;
  NOTIFY jobs, 'x';";
pub const CRLF_ESCAPE: &str = "a\r\nb";
pub const RAW: &str = r"C:\path\no\escapes \n";
pub const RAW_HASH: &str = r#"SET search_path = "tenant", public"#;
pub const RAW_TWO: &str = r##"a "# inside"##;
pub const RAW_EMPTY: &str = r"";
pub const EMPTY: &str = "";
pub const CONCAT: &str = concat!("SELECT ", "pg_backend_pid()");
pub const CONCAT_RAW: &str = concat!(r#"SET "x" "#, "= 1", r"\n");
pub const CONCAT_NESTED: &str = concat!("CREATE TEMP TABLE t (", "id int", ")");
pub const QUOTE_IN_RAW: &str = r#"it's "quoted""#;
pub const BRACES: &str = "{literal} {{braces}}";
pub const SLASHES: &str = "// not a comment /* nor this */";
pub const APOSTROPHE_AFTER: &str = "x"; // 'a' and b'c' after the literal
pub const LIFETIME_BEFORE: &str = { let _n: Option<&'static u8> = None; "after a lifetime" };
pub const CHAR_BEFORE: &str = { let _c = '"'; "after a quote char" };
pub const NESTED_COMMENT_BEFORE: &str = /* outer /* inner "no" */ still "comment" */ "after nested comment";
