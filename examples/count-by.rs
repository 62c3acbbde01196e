//! A tally: `count-by FIELD [FILE]...` counts the lines by their FIELD-th field, split as awk
//! splits by default (runs of blanks, leading ones skipped; a line without that field counts
//! under the empty key), and prints `COUNT KEY` by count descending, then key ascending, as
//! `awk '{print $FIELD}' | sort | uniq -c | sort -k1,1nr -k2` does once its leading blanks are
//! trimmed. `count-by --sum [FILE]...` adds up such `COUNT KEY` lines (the count is the line's
//! first field, 0 where it is not a number; the key is what follows the blank after it), so that
//! tallies of parts of a log, made apart, merge into the tally of the whole.

use linewright::{Filter, Tallying, fields};
use std::{cmp::Reverse, collections::HashMap, io::Write, process::ExitCode};

/// `count-by`'s own argument, before the FILEs: a field's number, or `--sum` (taken as its value,
/// so that FILEs may follow it).
#[derive(clap::Args)]
struct CountBy {
    /// The field to count lines by (1 is the first), or --sum to add up COUNT KEY lines
    #[arg(value_name = "FIELD", allow_hyphen_values = true, value_parser = by)]
    field: Field,
}

/// The field's number, `None` for `--sum`.
#[derive(Clone, Copy)]
struct Field(Option<usize>);

fn by(arg: &str) -> Result<Field, String> {
    let field = arg.parse().ok().filter(|&field| field > 0);
    let known = arg == "--sum" || field.is_some();
    known
        .then_some(Field(field))
        .ok_or("a field is 1 or more".into())
}

impl Tallying for CountBy {
    type Tally = HashMap<Box<[u8]>, u64, foldhash::fast::RandomState>;

    fn render_line(&self, counts: &mut Self::Tally, _: &mut Vec<u8>, line: &[u8]) {
        let mut fields = fields(line);
        let (key, count) = match self.field.0 {
            Some(n) => (fields.nth(n - 1), 1),
            None => {
                let count = fields
                    .next()
                    .and_then(|n| str::from_utf8(n).ok()?.parse().ok());
                let line = line.trim_ascii_start();
                let blank = line.iter().position(|&byte| byte == b' ');
                (blank.and_then(|at| line.get(at + 1..)), count.unwrap_or(0))
            }
        };
        let key = key.unwrap_or_default();
        match counts.get_mut(key) {
            Some(total) => *total = total.saturating_add(count), // no key copied where it is known
            None => drop(counts.insert(key.into(), count)),
        }
    }

    fn end(&self, counts: Self::Tally, out: &mut Vec<u8>) -> ExitCode {
        // Sorted by count, then by a key's first 16 bytes, held beside it, before the key itself:
        // a million keys, each in a heap allocation of its own, are seldom read to sort them.
        let first_16 =
            |key: &[u8]| u128::from_be_bytes(std::array::from_fn(|i| *key.get(i).unwrap_or(&0)));
        let mut counts: Vec<_> = counts
            .into_iter()
            .map(|(key, n)| (Reverse(n), first_16(&key), key))
            .collect();
        counts.sort_unstable();
        for (Reverse(count), _, key) in counts {
            let _ = write!(out, "{count} "); // into memory, which cannot fail
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
