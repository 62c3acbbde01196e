//! `--generate`: every binary's manual page and shell completions, made from its clap definitions
//! (docs/CONTRACT.md §4.5), checked through the tools that use them: the page rendered by `man`
//! with groff's warnings on, the bash completions sourced into a real bash and asked to complete.

mod common;

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::{DEADLINE, Finished, VARIANTS, Variant, finish, run_command, skip};

/// Every binary once, at its defaults.
fn binaries() -> Vec<Variant> {
    let mut seen = Vec::new();
    for variant in VARIANTS {
        if !seen.iter().any(|v: &Variant| v.program == variant.program) {
            seen.push(Variant {
                args: &[],
                ..*variant
            });
        }
    }
    seen
}

/// What `variant ARGS` printed on stdout, having exited 0 with nothing on stderr.
fn printed(variant: &Variant, args: &[&str]) -> String {
    let program = variant.program;
    let mut command = variant.command();
    command.args(args);
    let finished = run_command(command, b"");
    assert_success(&format!("{program} {}", args.join(" ")), &finished);
    String::from_utf8(finished.stdout).expect("generated text is UTF-8")
}

fn assert_success(what: &str, finished: &Finished) {
    assert!(
        finished.status.success() && finished.stderr.is_empty(),
        "{what}: {:?}, stderr {:?}",
        finished.status,
        finished.stderr
    );
}

/// `--help`'s long options, as a user reads them there: `--stats`, `--buffer-size`, ...
fn long_options(variant: &Variant) -> Vec<String> {
    let program = variant.program;
    let help = printed(variant, &["--help"]);
    let options: Vec<String> = help
        .lines()
        .filter_map(|line| line.trim_start().split(", ").last())
        .filter(|option| option.starts_with("--"))
        .map(|option| {
            option
                .split([' ', '=', '[', '<'])
                .next()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    assert!(
        options.len() >= 5,
        "{program}: no options in --help: {help}"
    );
    options
}

/// A file of this test's own, holding `text`.
fn scratch_file(name: &str, text: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("pipelines-generate-{}-{name}", std::process::id()));
    fs::write(&path, text).expect("writing a scratch file");
    path
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|output| output.status.success())
}

/// docs/CONTRACT.md §4.5: the page renders with `man -l` at 80 columns without a warning from
/// groff, and says what `--help` says (the byte counted, the cap, every option) and the exit
/// statuses.
#[test]
fn the_manual_page_renders_cleanly_and_says_what_help_says() {
    if !have("man") || !have("groff") {
        return skip("man or groff is not installed (apt-get install man-db groff-base)");
    }
    for variant in binaries() {
        let program = variant.program;
        let page = scratch_file(
            &format!("{}.1", variant.program),
            &printed(&variant, &["--generate", "man"]),
        );
        let mut man = Command::new("man");
        // The C locale makes groff write ASCII, so that `--stats` reads as typed, not with U+2010
        // hyphens; --warnings turns on groff's warnings, which man passes to stderr.
        man.args(["--warnings=all", "-l"])
            .arg(&page)
            .env("MANWIDTH", "80")
            .env("LC_ALL", "C")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat");
        let rendered = run_command(man, b"");
        // groff alone, every warning on, without the preprocessor that man puts before it.
        let mut groff = Command::new("groff");
        groff.args(["-ww", "-man", "-Tutf8", "-z"]).arg(&page);
        let groff = run_command(groff, b"");
        let _ = fs::remove_file(&page);
        assert_success(&format!("man -l on {program}'s page"), &rendered);
        assert_success(&format!("groff -ww on {program}'s page"), &groff);
        let text = String::from_utf8_lossy(&rendered.stdout);
        let mut wanted = vec![
            variant.program.to_owned(),
            "0x20".to_owned(),
            ">6".to_owned(),
            "EXIT STATUS".to_owned(),
        ];
        wanted.extend(long_options(&variant));
        for words in &wanted {
            assert!(
                text.contains(words.as_str()),
                "{program}'s man page lacks {words:?}:\n{text}"
            );
        }
        let statuses = text.split("EXIT STATUS").nth(1).unwrap_or("");
        for status in ["0", "1", "2"] {
            assert!(
                statuses
                    .lines()
                    .any(|line| line.trim_start().split(' ').next() == Some(status)),
                "{program}'s EXIT STATUS lacks {status}:\n{statuses}"
            );
        }
    }
}

/// docs/CONTRACT.md §4.5: a binary's page is the toolkit's, `.TH` naming the binary, its
/// version and the `pipelines` manual, and no placeholder for a program's name is left in it or
/// in `--help` (`BIN`, `NAME:`, "this binary"), as a filter of one's own shares their texts.
#[test]
fn the_manual_page_names_the_binary_and_no_placeholder() {
    for variant in binaries() {
        let program = variant.program;
        let page = printed(&variant, &["--generate", "man"]);
        let th = page
            .lines()
            .find(|line| line.starts_with(".TH "))
            .unwrap_or_default();
        assert!(
            th.starts_with(&format!(
                ".TH {program} 1  \"{program} {}",
                env!("CARGO_PKG_VERSION")
            )) && th.ends_with("\" pipelines"),
            "{th}"
        );
        for text in [page, printed(&variant, &["--help"])] {
            let words: Vec<&str> = text.split(|c: char| !c.is_ascii_alphanumeric()).collect();
            assert!(!words.contains(&"BIN"), "{program}: {text}");
            assert!(
                !text.contains("NAME:") && !text.contains("this binary"),
                "{program}: {text}"
            );
        }
    }
}

/// docs/CONTRACT.md §4.5: bash, having sourced the completions, has a completion for the binary
/// that offers every long option of `--help`, and `--generate`'s values after it.
#[test]
fn bash_completes_every_option_and_generate_s_values() {
    if !have("bash") {
        return skip("bash is not installed");
    }
    for variant in binaries() {
        let program = variant.program;
        let script = scratch_file(
            &format!("{}.bash", variant.program),
            &printed(&variant, &["--generate", "complete-bash"]),
        );
        // What bash does on Tab: the function `complete -p` names, called with the words so far.
        let complete = |words: &str| {
            let mut bash = Command::new("bash");
            bash.args(["--norc", "--noprofile", "-c"])
                .arg(
                    r#"source "$1" || exit 1
                    spec=$(complete -p "$2") || exit 1
                    function=${spec#*-F }; function=${function%% *}
                    read -ra COMP_WORDS <<< "$3"; COMP_WORDS+=("")
                    COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE="$3 "; COMP_POINT=${#COMP_LINE}
                    "$function" "$2" "" "${COMP_WORDS[COMP_CWORD - 1]}"
                    printf '%s\n' "${COMPREPLY[@]}""#,
                )
                .args([
                    "bash",
                    script.to_str().expect("a UTF-8 path"),
                    variant.program,
                    words,
                ]);
            let finished = run_command(bash, b"");
            assert_success(&format!("completing {words:?}"), &finished);
            String::from_utf8_lossy(&finished.stdout).into_owned()
        };
        let offered = complete(variant.program);
        for option in long_options(&variant) {
            assert!(
                offered.lines().any(|line| line == option),
                "{program}: bash does not offer {option}; it offers:\n{offered}"
            );
        }
        let values = complete(&format!("{} --generate", variant.program));
        for value in ["man", "complete-bash", "complete-zsh", "complete-fish"] {
            assert!(
                values.lines().any(|line| line == value),
                "{program}: bash does not offer --generate {value}; it offers:\n{values}"
            );
        }
        let _ = fs::remove_file(&script);
    }
}

/// docs/CONTRACT.md §4.5: every kind of script is made, for every binary, quietly, with exit 0.
#[test]
fn every_shell_s_completions_are_made() {
    for variant in binaries() {
        let program = variant.program;
        for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
            let script = printed(&variant, &["--generate", &format!("complete-{shell}")]);
            assert!(
                script.contains(variant.program) && script.contains("stats"),
                "{program}: {shell}'s completions name neither the binary nor its options:\n{script}"
            );
        }
    }
}

/// Runs `command`, its stdout set by the caller, stdin empty and stderr collected.
fn run_to(mut command: Command) -> Finished {
    let child = command
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning the binary");
    finish(child, DEADLINE)
}

/// docs/CONTRACT.md §4.5 and §5: `--generate`'s output is any output's: a closed stdout is exit
/// 0 and silence, a full disk one line and exit 1.
#[test]
fn generate_s_output_fails_as_any_output_does() {
    for variant in binaries() {
        let program = variant.program;
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let mut closed = variant.command();
        closed.args(["--generate", "man"]).stdout(writer);
        let finished = run_to(closed);
        assert_success(
            &format!("{program} --generate man, stdout closed"),
            &finished,
        );

        let mut full = variant.command();
        full.args(["--generate", "man"])
            .stdout(fs::File::create("/dev/full").expect("opening /dev/full"));
        let finished = run_to(full);
        assert_eq!(finished.status.code(), Some(1), "{program} > /dev/full");
        assert_eq!(
            finished.stderr,
            format!("{program}: writing stdout: No space left on device (os error 28)\n")
        );
    }
}
