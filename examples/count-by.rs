//! A tally: `count-by FIELD [FILE]...` counts the lines by their FIELD-th field, split as awk
//! splits by default (runs of blanks, leading ones skipped; a line without that field counts
//! under the empty key), and prints `COUNT KEY` by count descending, then key ascending, as
//! `awk '{print $FIELD}' | sort | uniq -c | sort -k1,1nr -k2` does once its leading blanks are
//! trimmed. `count-by --sum [FILE]...` adds up such `COUNT KEY` lines (a count is the line's
//! leading digits, 0 where it has none; the key is what follows the blank after them), so that
//! tallies of parts of a log, made apart, merge into the tally of the whole.

use linewright::{Filter, Tally, Tallying};
use std::{collections::HashMap, process::ExitCode};

/// `count-by`'s own argument, before the FILEs.
#[derive(clap::Args)]
struct CountBy {
    /// The field to count lines by (1 is the first), or --sum to add up COUNT KEY lines
    #[arg(value_name = "FIELD", allow_hyphen_values = true, value_parser = by)]
    by: By,
}

#[derive(Clone, Copy)]
enum By {
    Field(usize),
    Sum,
}

fn by(arg: &str) -> Result<By, String> {
    match arg {
        "--sum" => Ok(By::Sum),
        _ => arg
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .map(By::Field)
            .ok_or("a field is 1 or more".into()),
    }
}

/// How many lines each key had.
#[derive(Default)]
struct Counts(HashMap<Box<[u8]>, u64>);

impl Tally for Counts {
    fn merge(&mut self, mut later: Counts) {
        if later.0.len() > self.0.len() {
            std::mem::swap(self, &mut later); // the smaller folded into the larger
        }
        for (key, count) in later.0 {
            *self.0.entry(key).or_default() += count;
        }
    }
}

impl Counts {
    fn add(&mut self, key: &[u8], count: u64) {
        match self.0.get_mut(key) {
            Some(total) => *total = total.saturating_add(count),
            None => drop(self.0.insert(key.into(), count)),
        }
    }
}

/// `line` split at runs of blanks, leading ones skipped, as awk's default field splitting.
fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&byte| byte == b' ' || byte == b'\t')
        .filter(|field| !field.is_empty())
}

impl Tallying for CountBy {
    type Tally = Counts;

    fn render_line(&self, counts: &mut Counts, _: &mut Vec<u8>, line: &[u8]) {
        match self.by {
            By::Field(n) => counts.add(fields(line).nth(n - 1).unwrap_or_default(), 1),
            By::Sum => {
                let line = line.trim_ascii_start();
                let digits = line.iter().take_while(|byte| byte.is_ascii_digit()).count();
                let count = line[..digits].iter().try_fold(0u64, |n, &d| {
                    n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
                });
                let key = line[digits..].strip_prefix(b" ").unwrap_or(&line[digits..]);
                counts.add(key, count.unwrap_or(u64::MAX));
            }
        }
    }

    fn end(&self, counts: Counts, out: &mut Vec<u8>) -> ExitCode {
        let mut counts: Vec<_> = counts.0.into_iter().collect();
        counts.sort_unstable_by(|(a, m), (b, n)| n.cmp(m).then_with(|| a.cmp(b)));
        for (key, count) in counts {
            out.extend_from_slice(format!("{count} ").as_bytes());
            out.extend_from_slice(&key);
            out.push(b'\n');
        }
        ExitCode::SUCCESS
    }
}

fn main() -> ExitCode {
    Filter::new("count-by", env!("CARGO_PKG_VERSION"))
        .about("Count lines by a field, as awk '{print $FIELD}' | sort | uniq -c | sort -nr does")
        .run_with_args(|count_by: CountBy| count_by)
}
