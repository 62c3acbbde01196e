//! `gen-logs`: realistic web server log lines, the same bytes for the same seed.
//!
//! Most lines are Apache access log lines, in the common and the combined format, as the original
//! experiment's data (made by `flog`) was; those all hold more than six spaces. A share of short
//! free-text lines with 0 to 6 spaces (stack trace and message fragments) makes every header occur.
//!
//! Every value is drawn from one seeded PCG stream, a line at a time, so the first N lines for a
//! seed are the same whatever `--lines` is: a small data set is a prefix of a big one.

use std::io::{self, BufWriter, ErrorKind, Write};
use std::process::ExitCode;

use clap::Parser;
use rand_pcg::Pcg64Mcg;
use rand_pcg::rand_core::{Rng, SeedableRng};

/// Write seeded, reproducible Apache access log lines (and some short lines) to stdout.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// How many lines to write.
    #[arg(long, default_value_t = 1_000_000)]
    lines: u64,

    /// The seed: the same seed gives the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let stdout = io::stdout().lock();
    let mut out = BufWriter::with_capacity(1 << 16, stdout);
    let mut logs = Logs::new(args.seed);
    let written = (0..args.lines)
        .try_for_each(|_| logs.write_line(&mut out))
        .and_then(|()| out.flush());
    match written {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that has seen enough (`gen-logs | head`) is not a failure.
        Err(error) if error.kind() == ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            // Nothing more can be done if stderr fails too.
            let _ = writeln!(io::stderr(), "gen-logs: writing stdout: {error}");
            ExitCode::FAILURE
        }
    }
}

/// One line in this many is a short free-text line; the rest are access log lines.
const SHORT_LINE_ONE_IN: u32 = 8;

/// The generator's state: the random stream and the clock the log lines are stamped with.
struct Logs {
    rng: Pcg64Mcg,
    clock: Clock,
}

impl Logs {
    fn new(seed: u64) -> Self {
        Logs {
            rng: Pcg64Mcg::seed_from_u64(seed),
            clock: Clock::START,
        }
    }

    /// A uniform index below `n` (`n` > 0). The multiply-shift is biased by less than n / 2^32,
    /// nothing that matters for test data, and needs no division.
    fn below(&mut self, n: usize) -> usize {
        ((u64::from(self.rng.next_u32()) * n as u64) >> 32) as usize
    }

    fn pick<'a>(&mut self, choices: &[&'a str]) -> &'a str {
        choices[self.below(choices.len())]
    }

    fn write_line(&mut self, out: &mut impl Write) -> io::Result<()> {
        if self.below(SHORT_LINE_ONE_IN as usize) == 0 {
            self.write_short(out)
        } else {
            let combined = self.below(2) == 0;
            self.write_access(out, combined)
        }
    }

    /// A free-text line with exactly 0 to 6 spaces: words, some of it indented like a stack trace.
    fn write_short(&mut self, out: &mut impl Write) -> io::Result<()> {
        let spaces = self.below(7);
        let indent = if spaces >= 4 && self.below(2) == 0 {
            4
        } else {
            0
        };
        write!(out, "{:indent$}", "")?;
        for word in 0..=spaces - indent {
            if word > 0 {
                out.write_all(b" ")?;
            }
            out.write_all(self.pick(WORDS).as_bytes())?;
        }
        out.write_all(b"\n")
    }

    /// `host ident user [time] "request" status bytes`, and for the combined format
    /// ` "referer" "user agent"`.
    fn write_access(&mut self, out: &mut impl Write, combined: bool) -> io::Result<()> {
        let step = self.below(3) as u32;
        self.clock.advance(step);
        let host = self.rng.next_u32().to_be_bytes();
        let user = if self.below(4) == 0 {
            self.pick(WORDS)
        } else {
            "-"
        };
        let method = self.pick(METHODS);
        write!(
            out,
            "{}.{}.{}.{} - {user} [{}] \"{method} ",
            host[0], host[1], host[2], host[3], self.clock,
        )?;
        self.write_path(out)?;
        let protocol = self.pick(PROTOCOLS);
        let status = self.pick(STATUSES);
        let size = self.below(50_000);
        write!(out, " {protocol}\" {status} {size}")?;
        if combined {
            if self.below(3) == 0 {
                out.write_all(b" \"-\"")?;
            } else {
                let site = self.pick(WORDS);
                let domain = self.pick(DOMAINS);
                write!(out, " \"https://www.{site}.{domain}")?;
                self.write_path(out)?;
                out.write_all(b"\"")?;
            }
            write!(out, " \"{}\"", self.pick(USER_AGENTS))?;
        }
        out.write_all(b"\n")
    }

    /// `/word/word...`, sometimes with a file extension or a query.
    fn write_path(&mut self, out: &mut impl Write) -> io::Result<()> {
        for _ in 0..=self.below(4) {
            write!(out, "/{}", self.pick(WORDS))?;
        }
        match self.below(6) {
            0 => write!(out, ".{}", self.pick(EXTENSIONS)),
            1 => write!(out, "?id={}", self.below(100_000)),
            _ => Ok(()),
        }
    }
}

/// A wall clock for log stamps, stepped forward a few seconds at a time.
#[derive(Clone, Copy)]
struct Clock {
    year: u32,
    month: usize,
    day: u32,
    seconds_of_day: u32,
}

impl Clock {
    const START: Clock = Clock {
        year: 2024,
        month: 0,
        day: 1,
        seconds_of_day: 0,
    };

    fn advance(&mut self, seconds: u32) {
        self.seconds_of_day += seconds;
        while self.seconds_of_day >= 86_400 {
            self.seconds_of_day -= 86_400;
            self.day += 1;
            if self.day > self.days_in_month() {
                self.day = 1;
                self.month += 1;
                if self.month == 12 {
                    self.month = 0;
                    self.year += 1;
                }
            }
        }
    }

    fn days_in_month(&self) -> u32 {
        let leap = self.year.is_multiple_of(4)
            && (!self.year.is_multiple_of(100) || self.year.is_multiple_of(400));
        match self.month {
            1 if leap => 29,
            1 => 28,
            3 | 5 | 8 | 10 => 30,
            _ => 31,
        }
    }
}

/// Apache's `%t`: `10/Oct/2000:13:55:36 -0700`.
impl std::fmt::Display for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (hour, rest) = (self.seconds_of_day / 3600, self.seconds_of_day % 3600);
        write!(
            f,
            "{:02}/{}/{}:{hour:02}:{:02}:{:02} -0700",
            self.day,
            MONTHS[self.month],
            self.year,
            rest / 60,
            rest % 60
        )
    }
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

// Repeated entries weight the draw: most requests are GETs that succeed.
const METHODS: &[&str] = &[
    "GET", "GET", "GET", "GET", "POST", "POST", "PUT", "DELETE", "HEAD", "PATCH",
];
const PROTOCOLS: &[&str] = &["HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0"];
const STATUSES: &[&str] = &[
    "200", "200", "200", "200", "200", "200", "201", "204", "301", "302", "304", "400", "401",
    "403", "404", "404", "500", "502", "503",
];
const EXTENSIONS: &[&str] = &["html", "php", "js", "css", "png", "json", "gif"];
const DOMAINS: &[&str] = &["com", "net", "org", "io", "biz", "info"];

const WORDS: &[&str] = &[
    "account",
    "admin",
    "alpha",
    "api",
    "archive",
    "assets",
    "auth",
    "backend",
    "batch",
    "beta",
    "billing",
    "blog",
    "cache",
    "cart",
    "catalog",
    "checkout",
    "cloud",
    "cluster",
    "config",
    "content",
    "customer",
    "dashboard",
    "data",
    "deploy",
    "docs",
    "download",
    "edge",
    "engine",
    "event",
    "export",
    "feed",
    "files",
    "gateway",
    "graph",
    "health",
    "images",
    "import",
    "index",
    "invoice",
    "items",
    "jobs",
    "login",
    "logout",
    "media",
    "metrics",
    "mobile",
    "network",
    "orders",
    "portal",
    "profile",
    "queue",
    "report",
    "search",
    "service",
    "session",
    "settings",
    "static",
    "status",
    "storage",
    "stream",
    "support",
    "sync",
    "upload",
    "users",
    "v1",
    "v2",
    "widgets",
    "worker",
];

const USER_AGENTS: &[&str] = &[
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.43 Mobile Safari/537.36",
    "curl/8.4.0",
    "Wget/1.21.4",
    "Googlebot/2.1 (+http://www.google.com/bot.html)",
];
