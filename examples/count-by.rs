//! A tally: `count-by FIELD [FILE]...` counts the lines by their FIELD-th field, split as awk
//! splits by default (runs of blanks, leading ones skipped; a line without that field counts
//! under the empty key), and prints `COUNT KEY` by count descending, then key ascending, as
//! `awk '{print $FIELD}' | sort | uniq -c | sort -k1,1nr -k2` does once its leading blanks are
//! trimmed. `count-by --sum [FILE]...` adds up such `COUNT KEY` lines (`Counts::add_rendered`), so
//! that tallies of parts of a log, made apart, merge into the tally of the whole.

use linewright::{Counts, Error, Filter, Tallying, nth_fields};
use std::process::ExitCode;

/// `count-by`'s own argument, before the FILEs: a field's number, or `--sum` (taken as its value,
/// so that FILEs may follow it).
#[derive(clap::Args)]
struct CountBy {
    /// The field to count lines by (1 is the first), or --sum to add up COUNT KEY lines
    #[arg(value_name = "FIELD", allow_hyphen_values = true, value_parser = by)]
    field: usize, // 0 for --sum
}

fn by(arg: &str) -> Result<usize, String> {
    match arg.parse() {
        _ if arg == "--sum" => Ok(0),
        Ok(field) if field > 0 => Ok(field),
        _ => Err("a field is 1 or more".into()),
    }
}

impl Tallying for CountBy {
    type Tally = Counts<foldhash::fast::RandomState>;

    fn render_line(&self, counts: &mut Self::Tally, out: &mut Vec<u8>, line: &[u8]) {
        // The chunk that holds this one line: the line, or a lone `\n` for the empty line.
        _ = self.render_chunk(counts, out, if line.is_empty() { b"\n" } else { line });
    }

    /// Each line's key found in the pass that finds its end.
    fn render_chunk(
        &self,
        counts: &mut Self::Tally,
        _: &mut Vec<u8>,
        chunk: &[u8],
    ) -> Result<u64, Error> {
        Ok(match self.field {
            0 => counts.add_rendered(chunk),
            n => counts.add_all(nth_fields(chunk, n - 1)),
        })
    }

    fn end(&self, counts: Self::Tally, out: &mut Vec<u8>) -> ExitCode {
        counts.render(out);
        ExitCode::SUCCESS
    }
}

fn main() -> ExitCode {
    Filter::new("count-by", env!("CARGO_PKG_VERSION"))
        .about("Count lines by a field, as awk '{print $FIELD}' | sort | uniq -c | sort -nr does")
        .run_with_args(|count_by: CountBy| count_by)
}
