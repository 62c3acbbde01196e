//! File names as messages show them: quoted and escaped the way GNU coreutils show them in their
//! diagnostics (gnulib's `shell_escape_quoting_style`, with `:` quoted too), so that a message
//! naming a file is always one line and a name cannot forge a message of its own.
//!
//! - A name of ordinary characters is shown as is: `notes.txt`.
//! - One a shell would split or expand is put in single quotes: `'a b'`, `'$HOME'`; in double
//!   quotes when it holds a `'` and nothing that double quotes would expand: `"it's"`.
//! - Control characters (newline, tab, escape, DEL...), line and paragraph separators, and bytes
//!   that are not UTF-8 are written as `$'...'` escapes: `'a'$'\n''b'`, `''$'\377'`.
//!
//! Whatever the name, the result pasted into a shell gives the name back.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// `name` as a message shows it, on one line.
pub fn quote(name: &OsStr) -> String {
    let pieces = pieces(name.as_bytes());
    if pieces.is_empty() {
        return "''".to_owned();
    }
    if pieces
        .iter()
        .any(|piece| matches!(piece, Piece::Escaped(_)))
    {
        return shell_escaped(&pieces);
    }
    let text: String = pieces
        .iter()
        .filter_map(|piece| match piece {
            Piece::Shown(c) => Some(*c),
            Piece::Escaped(_) => None,
        })
        .collect();
    let needs_quotes = text
        .chars()
        .enumerate()
        .any(|(at, c)| forces_quotes(c, at, &text));
    if !needs_quotes {
        text
    } else if text.contains('\'')
        && text
            .chars()
            .enumerate()
            .all(|(at, c)| fits_double_quotes(c, at))
    {
        format!("\"{text}\"")
    } else {
        single_quoted(&text)
    }
}

/// A name cut into what is shown as itself and what is shown as an escaped byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    Shown(char),
    Escaped(u8),
}

fn pieces(name: &[u8]) -> Vec<Piece> {
    let mut pieces = Vec::with_capacity(name.len());
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            if is_printable(c) {
                pieces.push(Piece::Shown(c));
            } else {
                // A multi-byte character (a C1 control, a line separator) is escaped byte by
                // byte, as `$'...'` knows no other way to write it.
                pieces.extend(c.encode_utf8(&mut [0; 4]).bytes().map(Piece::Escaped));
            }
        }
        pieces.extend(chunk.invalid().iter().copied().map(Piece::Escaped));
    }
    pieces
}

/// Whether `c` may appear raw in a one-line message. Line and paragraph separators are not
/// controls but some terminals break lines at them, so they are escaped as GNU does.
fn is_printable(c: char) -> bool {
    !c.is_control() && !matches!(c, '\u{2028}' | '\u{2029}')
}

/// Characters a shell gives a meaning to anywhere in a word.
const SHELL_SPECIAL: &str = "!\"$&()*;<=>?[\\^`|";

/// Whether `c`, at position `at` of `name`, makes the name need quotes. `#` and `~` mean
/// something to a shell only at a word's start, `{` and `}` only as a word of their own; `:` is
/// quoted because messages use it to separate their parts.
fn forces_quotes(c: char, at: usize, name: &str) -> bool {
    match c {
        ' ' | '\'' | ':' => true,
        '#' | '~' => at == 0,
        '{' | '}' => name.chars().count() == 1,
        _ => SHELL_SPECIAL.contains(c),
    }
}

/// Whether `c`, at position `at`, may stand inside double quotes. This is GNU's rule, cautious
/// about `#`, `~`, `{` and `}` past the start, so that names show as GNU tools show them.
fn fits_double_quotes(c: char, at: usize) -> bool {
    match c {
        '#' | '~' => at == 0,
        '{' | '}' => false,
        _ => !SHELL_SPECIAL.contains(c),
    }
}

/// `text` in single quotes; each `'` in it closes them, is written escaped, and reopens them.
fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The pieces in single quotes, each run of escaped bytes in a `$'...'` of its own between them:
/// `a\nb` gives `'a'$'\n''b'`.
fn shell_escaped(pieces: &[Piece]) -> String {
    let mut quoted = String::from("'");
    let mut escaping = false;
    for piece in pieces {
        match *piece {
            Piece::Shown(c) => {
                if escaping {
                    quoted.push_str("''");
                    escaping = false;
                }
                if c == '\'' {
                    quoted.push_str(r"'\''");
                } else {
                    quoted.push(c);
                }
            }
            Piece::Escaped(byte) => {
                if !escaping {
                    quoted.push_str("'$'");
                    escaping = true;
                }
                quoted.push_str(&escape(byte));
            }
        }
    }
    quoted.push('\'');
    quoted
}

/// One byte as `$'...'` writes it: C's letter escapes where there is one, else three octal digits.
fn escape(byte: u8) -> String {
    match byte {
        0x07 => r"\a".to_owned(),
        0x08 => r"\b".to_owned(),
        0x0c => r"\f".to_owned(),
        b'\n' => r"\n".to_owned(),
        b'\r' => r"\r".to_owned(),
        b'\t' => r"\t".to_owned(),
        0x0b => r"\v".to_owned(),
        _ => format!("\\{byte:03o}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names and how GNU coreutils 9.1 (`cat` in a UTF-8 locale) shows them in a message.
    const GNU: &[(&[u8], &str)] = &[
        (b"notes.txt", "notes.txt"),
        (b"a%b,c@d+e-f", "a%b,c@d+e-f"),
        ("é".as_bytes(), "é"),
        (b"-", "-"),
        (b"", "''"),
        (b"a b", "'a b'"),
        (b"a:b", "'a:b'"),
        (b"$HOME", "'$HOME'"),
        (b"a\\b", r"'a\b'"),
        (b"a\"b", r#"'a"b'"#),
        (b"a=b", "'a=b'"),
        (b"a?b", "'a?b'"),
        (b"#a", "'#a'"),
        (b"a#", "a#"),
        (b"~a", "'~a'"),
        (b"a~", "a~"),
        (b"{", "'{'"),
        (b"a{", "a{"),
        (b"a]b", "a]b"),
        (b"'", r#""'""#),
        (b"a'b", r#""a'b""#),
        (b"a'b c", r#""a'b c""#),
        (b"#a'b", r##""#a'b""##),
        (b"a'b$c", r"'a'\''b$c'"),
        (b"a'b#c", r"'a'\''b#c'"),
        (b"{'", r"'{'\'''"),
        (b"a\nb", r"'a'$'\n''b'"),
        (b"\nb", r"''$'\n''b'"),
        (b"a\n", r"'a'$'\n'"),
        (b"\n", r"''$'\n'"),
        (b"\n\n", r"''$'\n\n'"),
        (b"'\n", r"''\'''$'\n'"),
        (b"a\tb", r"'a'$'\t''b'"),
        (b"a\x1bb", r"'a'$'\033''b'"),
        (b"\x01", r"''$'\001'"),
        (b"a\x7fb", r"'a'$'\177''b'"),
        (b"\xff", r"''$'\377'"),
        (b"a\xffb", r"'a'$'\377''b'"),
        (b"a\n\xffb", r"'a'$'\n\377''b'"),
        ("\u{85}".as_bytes(), r"''$'\302\205'"),
        ("\u{2028}".as_bytes(), r"''$'\342\200\250'"),
    ];

    #[test]
    fn names_show_as_gnu_shows_them() {
        for (name, expected) in GNU {
            assert_eq!(quote(OsStr::from_bytes(name)), *expected, "{name:?}");
        }
    }

    #[test]
    fn every_name_is_one_line_of_text() {
        let mut name: Vec<u8> = (0..=255).collect();
        name.extend_from_slice("\u{2028}\u{2029}\u{85}".as_bytes());
        let quoted = quote(OsStr::from_bytes(&name));
        assert!(
            quoted.chars().all(is_printable),
            "a control character in {quoted:?}"
        );
    }

    /// The module's promise: pasted into a shell, the shown name gives the name back.
    #[test]
    fn a_shell_reads_the_name_back() {
        // Every byte but NUL, which no file name holds.
        let every_byte: Vec<u8> = (1..=255).collect();
        let names = GNU.iter().map(|(name, _)| *name).chain([&every_byte[..]]);
        for name in names {
            let quoted = quote(OsStr::from_bytes(name));
            let output = std::process::Command::new("bash")
                .arg("-c")
                .arg(format!("printf %s {quoted}"))
                .output()
                .expect("running bash");
            assert_eq!(output.stdout, name, "{quoted}");
        }
    }
}
