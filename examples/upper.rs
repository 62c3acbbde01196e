//! A transform of one's own: each line's ASCII letters upper-cased by `std-baseline`'s loop or
//! (`--batched`) `batched`'s threads, with the binaries' edge (`cat`'s rules, `-z`, `--stats`,
//! messages, exit statuses): `printf 'a b\nc\n' | cargo run --example upper -- --batched`.

use clap::Parser;
use pipelines::cli::{self, CommonArgs, Request};
use pipelines::process;
use pipelines::strategy::{batched, std_baseline};
use pipelines::transform::Transform;
use std::process::ExitCode;

/// Upper-case every line's ASCII letters.
#[derive(Parser)]
#[command(name = "upper")]
struct Args {
    /// Render chunks of lines on two worker threads (`batched`), not in one loop.
    #[arg(long)]
    batched: bool,
    #[command(flatten)]
    common: CommonArgs,
}

struct Upper;

impl Transform for Upper {
    fn most_added(&self) -> usize {
        1 // the `\n`
    }

    fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
        out.extend(line.iter().map(u8::to_ascii_uppercase));
        out.push(b'\n');
    }
}

fn main() -> ExitCode {
    let args = match cli::parse::<Args>() {
        Request::Run(args) => args,
        Request::Answer(answer) => return process::answer::<Args>(answer),
    };
    if args.batched {
        let knobs = batched::Knobs {
            threads: 2,
            chunk_size: 64 << 10,
            queue: 2,
            clocks: args.common.stats,
        };
        process::filter("upper", &args.common, |input, output| {
            batched::run(&knobs, Upper, input, output)
        })
    } else {
        let knobs = std_baseline::Knobs {
            buffer_size: 64 << 10,
        };
        process::filter("upper", &args.common, |input, output| {
            std_baseline::run(&knobs, Upper, input, output)
        })
    }
}
