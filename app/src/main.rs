//! `banter`: the studio by default, plus CLI subcommands.
fn main() {}
