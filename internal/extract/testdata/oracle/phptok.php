<?php
// Writes the oracle for TestPHPOracle: for each file named in FILELIST (one
// path per line), the string literals that token_get_all finds outside
// interpolations and backtick commands: single- and double-quoted strings,
// heredocs and nowdocs, with their byte offsets and their values as PHP
// itself evaluates them, each interpolation replaced by pgpoolcheck_param.
// A value is null when PHP refuses the literal (an invalid escape).
//
//   php -d short_open_tag=0 phptok.php FILELIST > php.json

const PLACEHOLDER = 'pgpoolcheck_param';

function tok_id($t) { return is_array($t) ? $t[0] : $t; }
function tok_text($t) { return is_array($t) ? $t[1] : $t; }

// value evaluates the source text of one literal ($orig), in which every
// interpolation has been rewritten as {$__p} ($code). It is null when PHP
// does not accept the literal; the literal is checked in a closure that is
// never called, so none of its interpolations runs.
function value(string $orig, string $code): ?string {
    $__p = PLACEHOLDER;
    try {
        @eval('return function () { return ' . $orig . "\n; };");
        $v = @eval('return ' . $code . "\n;");
    } catch (Throwable $e) {
        return null;
    }
    return is_string($v) ? $v : null;
}

// interpolated reads a double-quoted string, heredoc or backtick command
// whose opening token is at $i. It returns the index after its closing
// token (or null when it is unterminated) and its text with every
// interpolation rewritten as {$__p}.
function interpolated(array $toks, int $i): array {
    $open = $toks[$i];
    $close = tok_id($open) === T_START_HEREDOC ? T_END_HEREDOC : substr(tok_text($open), -1);
    $code = tok_text($open);
    $n = count($toks);
    for ($j = $i + 1; $j < $n;) {
        $t = $toks[$j];
        $id = tok_id($t);
        if ($id === $close) {
            return [$j + 1, $code . tok_text($t)];
        }
        if ($id === T_ENCAPSED_AND_WHITESPACE) {
            $code .= tok_text($t);
            $j++;
            continue;
        }
        // An interpolation. A literal $ just before it must not join it
        // into ${.
        if (preg_match('/(?<!\\\\)(\\\\\\\\)*\$$/', $code)) {
            $code = substr($code, 0, -1) . '\\$';
        }
        $code .= '{$__p}';
        if ($id === T_VARIABLE) {
            $j++;
            if ($j < $n && tok_id($toks[$j]) === '[') {
                // Up to the ], which is missing when the offset is invalid.
                while ($j < $n && !in_array(tok_id($toks[$j]), [']', $close, T_ENCAPSED_AND_WHITESPACE], true)) {
                    $j++;
                }
                if ($j < $n && tok_id($toks[$j]) === ']') {
                    $j++;
                }
            } elseif ($j + 1 < $n && in_array(tok_id($toks[$j]), [T_OBJECT_OPERATOR, T_NULLSAFE_OBJECT_OPERATOR], true)
                && tok_id($toks[$j + 1]) === T_STRING) {
                $j += 2;
            }
            continue;
        }
        if ($id === T_CURLY_OPEN || $id === T_DOLLAR_OPEN_CURLY_BRACES) {
            $depth = 1;
            for ($j++; $j < $n && $depth > 0; $j++) {
                $d = tok_id($toks[$j]);
                if ($d === '{' || $d === T_CURLY_OPEN || $d === T_DOLLAR_OPEN_CURLY_BRACES) {
                    $depth++;
                } elseif ($d === '}') {
                    $depth--;
                }
            }
            continue;
        }
        $j++; // not valid PHP; keep going
    }
    return [null, $code];
}

$out = [];
foreach (file($argv[1], FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) as $file) {
    $src = file_get_contents($file);
    $toks = token_get_all($src);
    $offsets = [];
    $off = 0;
    foreach ($toks as $t) {
        $offsets[] = $off;
        $off += strlen(tok_text($t));
    }
    $offsets[] = $off;
    $strings = [];
    $n = count($toks);
    for ($i = 0; $i < $n;) {
        $t = $toks[$i];
        $id = tok_id($t);
        if ($id === T_CONSTANT_ENCAPSED_STRING) {
            $v = value(tok_text($t), tok_text($t));
            $strings[] = ['start' => $offsets[$i], 'end' => $offsets[$i + 1], 'value' => $v === null ? null : base64_encode($v)];
            $i++;
            continue;
        }
        $text = tok_text($t);
        if ($id === T_START_HEREDOC || $id === '"' || $id === '`' || !is_array($t) && strlen($text) == 2 && strtolower($text[0]) === 'b' && $text[1] === '"') {
            [$end, $code] = interpolated($toks, $i);
            if ($end === null) {
                break; // unterminated: the rest of the file
            }
            if (substr($text, -1) !== '`') {
                $v = value(implode('', array_map('tok_text', array_slice($toks, $i, $end - $i))), $code);
                $strings[] = ['start' => $offsets[$i], 'end' => $offsets[$end], 'value' => $v === null ? null : base64_encode($v)];
            }
            $i = $end;
            continue;
        }
        $i++;
    }
    $out[] = ['file' => $file, 'strings' => $strings];
}
echo json_encode($out, JSON_UNESCAPED_SLASHES), "\n";
