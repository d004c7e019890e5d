//! placeholder
#[derive(clap::Args, Debug)]
pub struct Args {}
pub fn run(_a: Args) -> anyhow::Result<()> { Ok(()) }
