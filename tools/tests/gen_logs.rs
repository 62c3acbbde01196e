//! `gen-logs` must make the same bytes for the same seed, and data in which every header occurs.

use std::process::Command;

fn generate(lines: u64, seed: u64) -> Vec<u8> {
    let output = Command::new(env!("CARGO_BIN_EXE_gen-logs"))
        .args(["--lines", &lines.to_string(), "--seed", &seed.to_string()])
        .output()
        .expect("running gen-logs");
    assert!(output.status.success(), "gen-logs failed: {output:?}");
    assert!(output.stderr.is_empty());
    output.stdout
}

#[test]
fn same_seed_same_bytes_and_a_small_set_is_a_prefix_of_a_big_one() {
    let big = generate(20_000, 7);
    assert_eq!(big, generate(20_000, 7));
    let small = generate(5_000, 7);
    assert!(big.starts_with(&small));
    assert_ne!(big, generate(20_000, 8), "the seed must matter");
}

#[test]
fn exactly_the_lines_asked_for_each_ending_in_a_newline() {
    let data = generate(1_234, 1);
    assert_eq!(data.last(), Some(&b'\n'));
    assert_eq!(data.iter().filter(|&&byte| byte == b'\n').count(), 1_234);
    assert!(generate(0, 1).is_empty());
}

#[test]
fn every_space_count_from_0_to_6_and_more_occurs() {
    let data = generate(10_000, 1);
    let mut lines_by_spaces = [0usize; 8];
    for line in data
        .split(|&byte| byte == b'\n')
        .filter(|line| !line.is_empty())
    {
        let spaces = line.iter().filter(|&&byte| byte == b' ').count();
        lines_by_spaces[spaces.min(7)] += 1;
    }
    assert!(
        lines_by_spaces.iter().all(|&lines| lines > 0),
        "{lines_by_spaces:?}"
    );
    // Mostly access log lines, which all hold more than six spaces.
    assert!(lines_by_spaces[7] > 8_000, "{lines_by_spaces:?}");
}

#[test]
fn access_lines_have_the_apache_shape() {
    let data = generate(1_000, 3);
    let text = String::from_utf8(data).expect("the generator writes ASCII");
    let access: Vec<&str> = text.lines().filter(|line| line.contains(" - ")).collect();
    assert!(access.len() > 800);
    for line in access {
        let (host, rest) = line.split_once(" - ").expect("host - user");
        assert_eq!(host.split('.').count(), 4, "{line}");
        assert!(
            host.split('.').all(|octet| octet.parse::<u8>().is_ok()),
            "{line}"
        );
        let time = &rest[rest.find('[').expect("[time]") + 1..rest.find(']').expect("[time]")];
        assert_eq!(time.len(), "01/Jan/2024:00:00:00 -0700".len(), "{line}");
        let request = rest.split('"').nth(1).expect("\"request\"");
        assert_eq!(request.split(' ').count(), 3, "{line}");
        assert!(
            request
                .split(' ')
                .nth(2)
                .is_some_and(|protocol| protocol.starts_with("HTTP/"))
        );
    }
}
